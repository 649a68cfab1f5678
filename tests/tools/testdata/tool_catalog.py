"""What psycopg 3 asks of the catalog and of parameter types: TypeInfo.fetch
(a $1::regtype lookup and oid::regtype::text), and Python lists bound as
arrays into array columns of a wider element type (psycopg sends a list of
small ints as int2[], of floats as float8[]). Prints one line per check,
"name: value", so that tests/tools can compare the output for streamdb with
the output for PostgreSQL; a failed check prints "name: ERROR <SQLSTATE>
<message>".

Invoked as: python3 tool_catalog.py <libpq DSN>
"""
import sys

import psycopg
from psycopg.types import TypeInfo

DSN = sys.argv[1]


def check(name, fn):
    try:
        print(f"{name}: {fn()}")
    except Exception as e:  # report and go on: the test compares lines
        code = getattr(getattr(e, "diag", None), "sqlstate", None)
        print(f"{name}: ERROR {code} {str(e).splitlines()[0]}")
    sys.stdout.flush()


with psycopg.connect(DSN, autocommit=True) as conn:
    def typeinfo(name):
        i = TypeInfo.fetch(conn, name)
        return i and (i.name, i.oid, i.array_oid, i.regtype, i.delimiter)

    for n in ["numeric", "int4", "integer", "text", "varchar", "timestamptz", "no_such_type"]:
        check("typeinfo " + n, lambda: typeinfo(n))
    conn.execute("CREATE TABLE py_arrays (id int PRIMARY KEY, xs int[], ys bigint[], zs numeric[])")
    check("insert small ints", lambda: conn.execute(
        "INSERT INTO py_arrays VALUES (%s, %s, %s, %s)", (1, [1, 2, 3], [4, 5], [6])).rowcount)
    check("insert wide values", lambda: conn.execute(
        "INSERT INTO py_arrays VALUES (%s, %s, %s, %s)", (2, [70000, 2], [1 << 40], [1.5])).rowcount)
    check("update list", lambda: conn.execute(
        "UPDATE py_arrays SET xs = %s WHERE id = %s", ([9, 8], 1)).rowcount)
    check("rows", lambda: conn.execute("SELECT * FROM py_arrays ORDER BY id").fetchall())
