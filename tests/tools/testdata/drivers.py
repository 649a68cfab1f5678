"""Connects to the server named by the DSN argument with psycopg2,
psycopg 3 and SQLAlchemy (over psycopg2) as their users do, and prints one
line per check, "name: value", for tests/tools to compare. A check that
fails prints "name: ERROR <SQLSTATE> <message>" and the script goes on.

Invoked as: python3 drivers.py <libpq DSN>
"""
import sys

import psycopg
import psycopg2
import sqlalchemy as sa

DSN = sys.argv[1]


def check(name, fn):
    try:
        print(f"{name}: {fn()}")
    except Exception as e:  # report and go on: the test compares lines
        code = getattr(e, "pgcode", None) or getattr(getattr(e, "diag", None), "sqlstate", None)
        orig = getattr(e, "orig", None)
        if code is None and orig is not None:
            code = getattr(orig, "pgcode", None)
        print(f"{name}: ERROR {code} {str(e).splitlines()[0]}")
    sys.stdout.flush()


def one(conn, sql, params=None):
    cur = conn.cursor()
    cur.execute(sql, params)
    return cur.fetchone()


def driver_checks(label, conn):
    check(f"{label} version", lambda: one(conn, "SELECT version()")[0].split(" ")[0:2])
    check(f"{label} current_setting", lambda: one(conn, "SELECT current_setting('server_version_num')::int >= 150000")[0])
    check(f"{label} now", lambda: type(one(conn, "SELECT now()")[0]).__name__)
    check(f"{label} typarray", lambda: one(conn, "SELECT typarray FROM pg_type WHERE typname = %s", ("text",))[0])
    check(f"{label} params", lambda: one(conn, "SELECT id, name FROM accounts WHERE id = %s", (1,)))
    check(f"{label} schemas", lambda: one(conn, "SELECT current_schemas(true)")[0])


conn2 = psycopg2.connect(DSN)
conn2.autocommit = True
check("psycopg2 server_version", lambda: conn2.server_version >= 150000)
driver_checks("psycopg2", conn2)
conn2.close()

with psycopg.connect(DSN, autocommit=True) as conn3:
    check("psycopg3 server_version", lambda: conn3.info.server_version >= 150000)
    driver_checks("psycopg3", conn3)

engine = sa.create_engine("postgresql+psycopg2://" + DSN.split("://", 1)[1])
with engine.connect() as conn:
    check("sqlalchemy select", lambda: conn.execute(sa.text("SELECT name FROM accounts WHERE id = :id"), {"id": 1}).scalar())
    insp = sa.inspect(conn)
    check("sqlalchemy get_table_names", lambda: insp.get_table_names())
    check("sqlalchemy has_table", lambda: insp.has_table("accounts"))
    check("sqlalchemy get_columns", lambda: [(c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns("accounts")])
    check("sqlalchemy get_pk_constraint", lambda: insp.get_pk_constraint("accounts")["constrained_columns"])
