// RunSQL is a small JDBC client for the tests in tests/jdbc: it connects
// with the URL given as its first argument (user and password come from the
// URL's properties) and runs each line of standard input as one statement.
// For each statement it prints the result rows, one line each with the
// columns separated by a tab, then a line "OK"; a statement that fails
// prints "ERROR <SQLSTATE> <message>". A connection that cannot be made
// prints "CONNECT-ERROR <SQLSTATE> <message>" and exits with status 2.
//
// These commands reach the driver's other APIs:
//
//	\meta <method> [arg ...]   calls DatabaseMetaData.<method> and prints a
//	                           header line "# <label>\t..." before the rows.
//	                           getTables [namePattern], getColumns <table>,
//	                           getPrimaryKeys <table>, getIndexInfo <table>,
//	                           getImportedKeys <table>, getExportedKeys <table>,
//	                           getSchemas, getCatalogs, getTableTypes,
//	                           getTypeInfo, getFunctions [namePattern].
//	\prepare <sql>\t<type>:<value>\t...
//	                           runs <sql> as a PreparedStatement with one
//	                           parameter per tab-separated field; <type> is
//	                           int, long, text, bool, numeric (setBigDecimal),
//	                           timestamp (setTimestamp, "yyyy-mm-dd hh:mm:ss"),
//	                           date, interval (PGInterval), uuid
//	                           (setObject of a java.util.UUID), null, or
//	                           intarray / textarray (Connection.createArrayOf
//	                           and setArray; the value is a comma-separated
//	                           list).
//	\autocommit on|off, \commit, \rollback
//	                           Connection.setAutoCommit, commit, rollback.
//	\fetch <n> <sql>           runs <sql> with Statement.setFetchSize(n), which
//	                           pgjdbc reads through a portal, n rows at a time,
//	                           when autocommit is off.
//	\copyout <sql>             CopyManager.copyOut; prints the data.
//	\copyin <sql>\t<row>\t...  CopyManager.copyIn of the rows, one per field.
//	\rsmeta <sql>             runs <sql> and prints, per result column, its
//	                           ResultSetMetaData: label, column name, table
//	                           name, schema name, type name, precision,
//	                           scale, isNullable, isAutoIncrement.
//
// A column of an array type prints as ResultSet.getArray reads it
// ([1, 2]), after its text; a uuid column prints the class getObject
// returns (java.util.UUID) after its text.
import java.io.BufferedReader;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.Arrays;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;

public class RunSQL {
    public static void main(String[] args) throws Exception {
        Connection conn;
        try {
            conn = DriverManager.getConnection(args[0]);
        } catch (SQLException e) {
            System.out.println("CONNECT-ERROR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
            System.exit(2);
            return;
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            try {
                if (line.startsWith("\\meta ")) {
                    meta(conn.getMetaData(), line.substring(6).trim().split(" +"));
                } else if (line.startsWith("\\prepare ")) {
                    prepared(conn, line.substring(9).split("\t"));
                } else if (line.startsWith("\\autocommit ")) {
                    conn.setAutoCommit(line.substring(12).trim().equals("on"));
                } else if (line.equals("\\commit")) {
                    conn.commit();
                } else if (line.equals("\\rollback")) {
                    conn.rollback();
                } else if (line.startsWith("\\fetch ")) {
                    String[] f = line.substring(7).trim().split(" ", 2);
                    try (Statement st = conn.createStatement()) {
                        st.setFetchSize(Integer.parseInt(f[0]));
                        printRows(st.executeQuery(f[1]), false);
                    }
                } else if (line.startsWith("\\copyout ")) {
                    StringWriter w = new StringWriter();
                    new org.postgresql.copy.CopyManager((org.postgresql.core.BaseConnection) conn).copyOut(line.substring(9), w);
                    System.out.print(w);
                } else if (line.startsWith("\\rsmeta ")) {
                    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(line.substring(8))) {
                        ResultSetMetaData md = rs.getMetaData();
                        for (int i = 1; i <= md.getColumnCount(); i++) {
                            System.out.println(String.join("\t", md.getColumnLabel(i), md.getColumnName(i), md.getTableName(i),
                                md.getSchemaName(i), md.getColumnTypeName(i), String.valueOf(md.getPrecision(i)),
                                String.valueOf(md.getScale(i)), String.valueOf(md.isNullable(i)), String.valueOf(md.isAutoIncrement(i))));
                        }
                    }
                } else if (line.startsWith("\\copyin ")) {
                    String[] f = line.substring(8).split("\t", 2);
                    String data = f.length > 1 ? String.join("\n", f[1].split("\t")) + "\n" : "";
                    long n = new org.postgresql.copy.CopyManager((org.postgresql.core.BaseConnection) conn).copyIn(f[0], new StringReader(data));
                    System.out.println("copied " + n);
                } else {
                    try (Statement st = conn.createStatement()) {
                        if (st.execute(line)) {
                            printRows(st.getResultSet(), false);
                        }
                    }
                }
                System.out.println("OK");
            } catch (SQLException e) {
                System.out.println("ERROR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
            }
        }
        conn.close();
    }

    static void meta(DatabaseMetaData md, String[] a) throws SQLException {
        String arg = a.length > 1 ? a[1] : null;
        ResultSet rs;
        switch (a[0]) {
            case "getTables": rs = md.getTables(null, null, arg == null ? "%" : arg, null); break;
            case "getColumns": rs = md.getColumns(null, null, arg, "%"); break;
            case "getPrimaryKeys": rs = md.getPrimaryKeys(null, null, arg); break;
            case "getIndexInfo": rs = md.getIndexInfo(null, null, arg, false, false); break;
            case "getImportedKeys": rs = md.getImportedKeys(null, null, arg); break;
            case "getExportedKeys": rs = md.getExportedKeys(null, null, arg); break;
            case "getSchemas": rs = md.getSchemas(); break;
            case "getCatalogs": rs = md.getCatalogs(); break;
            case "getTableTypes": rs = md.getTableTypes(); break;
            case "getTypeInfo": rs = md.getTypeInfo(); break;
            case "getFunctions": rs = md.getFunctions(null, null, arg == null ? "%" : arg); break;
            default: throw new SQLException("unknown \\meta method " + a[0], "42000");
        }
        try (rs) {
            printRows(rs, true);
        }
    }

    static void prepared(Connection conn, String[] f) throws Exception {
        try (PreparedStatement ps = conn.prepareStatement(f[0])) {
            for (int i = 1; i < f.length; i++) {
                int colon = f[i].indexOf(':');
                String type = f[i].substring(0, colon), v = f[i].substring(colon + 1);
                switch (type) {
                    case "int": ps.setInt(i, Integer.parseInt(v)); break;
                    case "long": ps.setLong(i, Long.parseLong(v)); break;
                    case "text": ps.setString(i, v); break;
                    case "bool": ps.setBoolean(i, Boolean.parseBoolean(v)); break;
                    case "numeric": ps.setBigDecimal(i, new BigDecimal(v)); break;
                    case "timestamp": ps.setTimestamp(i, java.sql.Timestamp.valueOf(v)); break;
                    case "date": ps.setDate(i, java.sql.Date.valueOf(v)); break;
                    case "interval": ps.setObject(i, new org.postgresql.util.PGInterval(v)); break;
                    case "uuid": ps.setObject(i, java.util.UUID.fromString(v)); break;
                    case "json": case "jsonb": {
                        org.postgresql.util.PGobject o = new org.postgresql.util.PGobject();
                        o.setType(type);
                        o.setValue(v);
                        ps.setObject(i, o);
                        break;
                    }
                    case "null": ps.setNull(i, Types.VARCHAR); break;
                    case "intarray": ps.setArray(i, conn.createArrayOf("int4", Arrays.stream(v.split(",")).map(Integer::valueOf).toArray())); break;
                    case "textarray": ps.setArray(i, conn.createArrayOf("text", v.split(","))); break;
                    default: throw new SQLException("unknown parameter type " + type, "42000");
                }
            }
            if (ps.execute()) {
                printRows(ps.getResultSet(), false);
            }
        }
    }

    static void printRows(ResultSet rs, boolean header) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        int n = md.getColumnCount();
        if (header) {
            StringBuilder b = new StringBuilder("#");
            for (int i = 1; i <= n; i++) {
                b.append(i > 1 ? "\t" : " ").append(md.getColumnLabel(i));
            }
            System.out.println(b);
        }
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 1; i <= n; i++) {
                if (i > 1) {
                    b.append('\t');
                }
                String v = rs.getString(i);
                b.append(v == null ? "NULL" : v);
                if (v != null && md.getColumnType(i) == Types.ARRAY) {
                    b.append(' ').append(Arrays.deepToString((Object[]) rs.getArray(i).getArray()));
                }
                if (v != null && md.getColumnTypeName(i).equals("uuid")) {
                    b.append(' ').append(rs.getObject(i).getClass().getName());
                }
            }
            System.out.println(b);
        }
    }
}
