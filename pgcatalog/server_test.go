package pgcatalog

import (
	"testing"
	"time"

	"streamdb/config"
)

func TestRolesAndUsers(t *testing.T) {
	e := fakeEngine{roles: []Role{
		{OID: 16390, Name: "alice", Login: true, Password: true},
		{OID: 16391, Name: "readers"},
		{OID: 10, Name: BootstrapUser, Superuser: true, Login: true, Password: true},
	}}
	contains(t, "pg_roles", column(t, e, "pg_roles", "oid", "rolname", "rolsuper", "rolcanlogin"),
		"16390|alice|false|true", "16391|readers|false|false", "10|streamdb|true|true", "6171|pg_database_owner|false|false")
	users := column(t, e, "pg_user", "usename", "usesysid")
	if len(users) != 2 {
		t.Errorf("pg_user lists the roles that can log in only: %v", users)
	}
	contains(t, "pg_user", users, "alice|16390", "streamdb|10")
}

func TestStatActivity(t *testing.T) {
	started := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	e := fakeEngine{
		roles: []Role{{OID: 16390, Name: "alice", Login: true}},
		backends: []Backend{
			{PID: 7, User: "alice", Database: "shop", AppName: "psql", ClientAddr: "127.0.0.1", ClientPort: 5000,
				Started: started, State: "active", Query: "SELECT 1"},
			{PID: 8, User: "gone", Database: "shop", ClientPort: -1, Started: started, State: "idle"},
		},
	}
	contains(t, "pg_stat_activity",
		column(t, e, "pg_stat_activity", "datid", "pid", "usesysid", "usename", "application_name", "client_addr", "client_port", "query_start", "state", "query"),
		"16383|7|16390|alice|psql|127.0.0.1|5000|NULL|active|SELECT 1",
		"16383|8|NULL|gone||NULL|-1|NULL|idle|")
}

func TestSettings(t *testing.T) {
	e := fakeEngine{}
	if len(config.Settings) == 0 {
		t.Fatal("config lists no settings")
	}
	key := config.Settings[0].Key
	rows := column(t, e, "pg_settings", "name", "setting", "context", "source")
	contains(t, "pg_settings", rows, key+"|v-"+key+"|superuser|configuration file",
		"DateStyle|ISO, MDY|user|default", "max_index_keys|32|internal|default")
	names := column(t, e, "pg_settings", "name")
	for i := 1; i < len(names); i++ {
		if names[i-1] > names[i] {
			t.Fatalf("pg_settings is not in name order: %q before %q", names[i-1], names[i])
		}
	}
	contains(t, "pg_database", column(t, e, "pg_database", "oid", "datname"), "16383|streamdb")
}
