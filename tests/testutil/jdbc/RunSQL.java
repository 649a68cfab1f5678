// RunSQL is a small JDBC client for the tests in tests/jdbc: it connects
// with the URL given as its first argument (user and password come from the
// URL's properties) and runs each line of standard input as one statement.
// For each statement it prints the result rows, one line each with the
// columns separated by a tab, then a line "OK"; a statement that fails
// prints "ERROR <SQLSTATE> <message>". A connection that cannot be made
// prints "CONNECT-ERROR <SQLSTATE> <message>" and exits with status 2.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

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
            try (Statement st = conn.createStatement()) {
                if (st.execute(line)) {
                    printRows(st.getResultSet());
                }
                System.out.println("OK");
            } catch (SQLException e) {
                System.out.println("ERROR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
            }
        }
        conn.close();
    }

    static void printRows(ResultSet rs) throws SQLException {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 1; i <= n; i++) {
                if (i > 1) {
                    b.append('\t');
                }
                String v = rs.getString(i);
                b.append(v == null ? "NULL" : v);
            }
            System.out.println(b);
        }
    }
}
