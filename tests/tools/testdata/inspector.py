"""Reads a schema through SQLAlchemy's inspector (over psycopg2) and
psycopg's copy, as applications and migration tools do, and prints one line
per check, "name: value", for tests/tools to compare. A check that fails
prints "name: ERROR <SQLSTATE> <message>" and the script goes on.

Invoked as: python3 inspector.py <libpq DSN>
"""
import io
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


engine = sa.create_engine("postgresql+psycopg2://" + DSN.split("://", 1)[1])
with engine.connect() as conn:
    insp = sa.inspect(conn)
    check("get_table_names", lambda: sorted(insp.get_table_names()))
    check("get_view_names", lambda: sorted(insp.get_view_names()))
    check("get_columns", lambda: [(c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns("accounts")])
    check("get_pk_constraint", lambda: insp.get_pk_constraint("accounts")["constrained_columns"])
    check("get_columns arrays", lambda: [(c["name"], type(c["type"]).__name__, str(getattr(c["type"], "item_type", "")))
                                         for c in insp.get_columns("tagged")])
    check("get_pk_name", lambda: insp.get_pk_constraint("accounts")["name"])
    check("get_view_columns", lambda: [(c["name"], str(c["type"])) for c in insp.get_columns("totals")])
    check("get_view_definition", lambda: " ".join(insp.get_view_definition("totals").split()))
    check("get_indexes", lambda: insp.get_indexes("accounts"))
    check("get_foreign_keys", lambda: insp.get_foreign_keys("accounts"))
    check("get_unique_constraints", lambda: insp.get_unique_constraints("accounts"))
    check("get_schema_names", lambda: sorted(insp.get_schema_names()))
    md = sa.MetaData()
    check("reflect", lambda: sorted(md.reflect(bind=conn) or md.tables.keys()))
    check("reflected pk", lambda: [c.name for c in md.tables["accounts"].primary_key.columns])

with psycopg2.connect(DSN) as conn2:
    cur = conn2.cursor()
    def copy_from():
        cur.copy_expert("COPY accounts (id, name, balance) FROM STDIN WITH (FORMAT csv)", io.StringIO("7,gus,1.25\n8,hal,\n"))
        conn2.commit()
        return cur.rowcount
    check("psycopg2 copy_expert from", copy_from)
    def copy_to():
        buf = io.StringIO()
        cur.copy_expert("COPY (SELECT id, name FROM accounts WHERE id >= 7 ORDER BY id) TO STDOUT WITH CSV HEADER", buf)
        return buf.getvalue().splitlines()
    check("psycopg2 copy_expert to", copy_to)

with psycopg.connect(DSN, autocommit=True) as conn3:
    def copy3():
        with conn3.cursor() as c:
            with c.copy("COPY accounts (id, name) FROM STDIN") as cp:
                cp.write_row((9, "ivy"))
                cp.write_row((10, "jo\tn"))
            return c.execute("SELECT name FROM accounts WHERE id IN (9, 10) ORDER BY id").fetchall()
    check("psycopg3 copy write_row", copy3)
    def copy3_out():
        with conn3.cursor() as c:
            with c.copy("COPY (SELECT id, name FROM accounts WHERE id >= 9 ORDER BY id) TO STDOUT") as cp:
                return [r for r in cp.rows()]
    check("psycopg3 copy rows", copy3_out)
