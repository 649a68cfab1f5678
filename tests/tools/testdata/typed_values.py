"""Reads every type streamdb has, arrays included, through psycopg2 and
psycopg 3 as Python values, binds Python lists, tuples and other values
as parameters, and commits and rolls back transactions. Prints one line
per check, "name: value", so that tests/tools can compare the output for
streamdb with the output for PostgreSQL; a failed check prints
"name: ERROR <SQLSTATE> <message>".

Invoked as: python3 typed_values.py <libpq DSN>
The DSN's database must have the table made by SCHEMA below.
"""
import sys
import uuid

import psycopg
import psycopg2
from psycopg.types.json import Json, Jsonb
import psycopg2.extras
import sqlalchemy as sa

DSN = sys.argv[1]

# Every type, as a literal each driver reads into its Python type.
VALUES = [
    ("int2", "12::int2"), ("int4", "-34"), ("int8", "9007199254740993::int8"),
    ("float4", "1.5::float4"), ("float8", "'NaN'::float8"), ("numeric", "12.50::numeric"),
    ("text", "'héllo'"), ("varchar", "'v'::varchar(5)"), ("bool", "true"),
    ("date", "'2020-02-29'::date"), ("timestamp", "'2020-01-02 03:04:05.25'::timestamp"),
    ("timestamptz", "'2020-01-02 03:04:05+02'::timestamptz"), ("interval", "'1 day 02:03:04.5'::interval"),
    ("time", "'12:34:56.5'::time"), ("timetz", "'12:34:56.5-03:30'::timetz"), ("time 24:00", "'24:00'::time"),
    ("time[]", "'{12:00,NULL}'::time[]"), ("bytea", "'\\x00ff41'::bytea"),
    ("int4[]", "'{1,NULL,3}'::int4[]"), ("int8[]", "ARRAY[1,2]::int8[]"), ("text[]", "'{a,\"b c\",NULL,\"\"}'::text[]"),
    ("numeric[]", "'{1.50,2}'::numeric[]"), ("float8[]", "'{1.5}'::float8[]"), ("bool[]", "'{t,f}'::bool[]"),
    ("date[]", "'{2020-01-02}'::date[]"), ("timestamptz[]", "'{\"2020-01-02 03:04:05+00\"}'::timestamptz[]"),
    ("varchar[]", "'{x}'::varchar[]"), ("empty int4[]", "'{}'::int4[]"),
    ("uuid", "'{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}'::uuid"),
    ("uuid[]", "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'::uuid[]"),
    ("json", "'{\"b\": 1, \"a\": [1, 2.5, null, \"é\"]}'::json"),
    ("jsonb", "'{\"b\": 1, \"a\": [1, 2.5, null, \"é\"]}'::jsonb"),
    ("jsonb scalar", "'\"s\"'::jsonb"), ("jsonb null", "'null'::jsonb"),
]

# psycopg2 reads uuid as str and cannot bind uuid.UUID until told to
# (psycopg 3 does both by itself).
psycopg2.extras.register_uuid()
U = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
DOC = {"k": "v é", "a": [1, 2.5, None, {"x": True}], "n": -0.0, "": {}}


def check(name, fn):
    try:
        print(f"{name}: {fn()}")
    except Exception as e:  # report and go on: the test compares lines
        code = getattr(e, "pgcode", None) or getattr(getattr(e, "diag", None), "sqlstate", None)
        print(f"{name}: ERROR {code} {str(e).splitlines()[0]}")
    sys.stdout.flush()


def plain(v):
    """bytes for a memoryview (psycopg2's bytea), whose repr is an address."""
    if isinstance(v, memoryview):
        return bytes(v)
    if isinstance(v, tuple):
        return tuple(plain(x) for x in v)
    return v


def one(conn, sql, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return plain(cur.fetchone())


def checks(label, conn, binary=False):
    kw = {"binary": True} if binary else {}

    def value(sql):
        with conn.cursor(**kw) as cur:
            cur.execute("SELECT " + sql)
            v = cur.fetchone()[0]
            return f"{type(v).__name__} {plain(v)!r}"

    for name, sql in VALUES:
        check(f"{label} {name}", lambda: value(sql))
    check(f"{label} list param int", lambda: one(conn, "SELECT %s::int8[]", ([1, 2, 3],))[0])
    check(f"{label} jsonb param", lambda: one(conn, "SELECT %s::jsonb ->> 'k', %s::json", ('{"k": "v é"}', '[1, {"x": true}]')))
    check(f"{label} list param text", lambda: one(conn, "SELECT %s::text[]", (["a b", "", None],))[0])
    check(f"{label} = ANY list", lambda: one(conn, "SELECT count(*) FROM typed WHERE id = ANY(%s)", ([1, 3],))[0])
    check(f"{label} array column", lambda: one(conn, "SELECT tags, ns FROM typed WHERE tags @> %s", (["b"],)))
    check(f"{label} params", lambda: one(conn, "SELECT %s::numeric + 1, %s::date, %s::bytea", (12.5, "2020-01-02", b"\x01\x02")))
    check(f"{label} uuid param", lambda: one(conn, "SELECT %s, %s::text, pg_typeof(%s)::text", (U, U, U)))

    def uuid_key():
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO keyed VALUES (%s, %s)", [(U, 1), (uuid.UUID(int=1), 2)])
        got = one(conn, "SELECT id, n FROM keyed WHERE id = %s", (U,)), \
            one(conn, "SELECT array_agg(id ORDER BY id)::text FROM keyed")
        with conn.cursor() as cur:
            cur.execute("DELETE FROM keyed WHERE id = ANY(%s)", ([U, uuid.UUID(int=1)],))
        return got
    check(f"{label} uuid key", uuid_key)
    if isinstance(conn, psycopg.Connection):
        # %b sends the parameter in binary: 16 bytes of type uuid.
        check(f"{label} uuid binary param", lambda: one(conn, "SELECT %b, %b::text", (U, U)))
        # Json and Jsonb send a Python value typed json and jsonb, in text
        # (%s) or binary (%b: jsonb's is a version byte, then the text);
        # json.dumps escapes é as \u00e9, which json keeps and jsonb reads.
        for wrap in (Json, Jsonb):
            name = wrap.__name__
            check(f"{label} {name} param", lambda: one(
                conn, "SELECT %s, %s::text, pg_typeof(%s)::text", (wrap(DOC), wrap(DOC), wrap(DOC))))
            check(f"{label} {name} binary param", lambda: one(
                conn, "SELECT %b, %b::text, pg_typeof(%b)::text", (wrap(DOC), wrap(DOC), wrap(DOC))))
        check(f"{label} Jsonb operators on params", lambda: one(
            conn, "SELECT %s -> 'a' -> 3 ->> 'x', %b @> %s", (Jsonb(DOC), Jsonb(DOC), Jsonb({"k": "v é"}))))


def transactions(label, conn):
    def commit_rollback():
        with conn.cursor() as cur:
            cur.execute("INSERT INTO typed (id, tags) VALUES (%s, %s)", (100, ["t"]))
        conn.rollback()
        with conn.cursor() as cur:
            cur.execute("INSERT INTO typed (id, tags) VALUES (%s, %s)", (101, ["u"]))
        conn.commit()
        got = one(conn, "SELECT array_agg(id ORDER BY id) FROM typed WHERE id >= 100")[0]
        with conn.cursor() as cur:
            cur.execute("DELETE FROM typed WHERE id >= 100")
        conn.commit()
        return got
    check(f"{label} commit and rollback", commit_rollback)

    def named_cursor():
        with conn.cursor(name="walk") as cur:
            cur.itersize = 2
            cur.execute("SELECT id, tags FROM typed ORDER BY id")
            first = cur.fetchmany(2)
            rest = cur.fetchall()
        conn.commit()
        return first, rest
    check(f"{label} named cursor", named_cursor)


conn2 = psycopg2.connect(DSN)
conn2.autocommit = True
checks("psycopg2", conn2)
conn2.autocommit = False
transactions("psycopg2", conn2)
conn2.close()

with psycopg.connect(DSN, autocommit=True) as conn3:
    checks("psycopg3", conn3)
    checks("psycopg3 binary", conn3, binary=True)
with psycopg.connect(DSN) as conn3:
    transactions("psycopg3", conn3)

# SQLAlchemy (over psycopg2; the installed SQLAlchemy has no psycopg 3
# dialect): a transaction rolled back and one committed, with arrays.
engine = sa.create_engine("postgresql+psycopg2://" + DSN.split("://", 1)[1])


def sqlalchemy_transactions():
    with engine.connect() as conn:
        tx = conn.begin()
        conn.execute(sa.text("INSERT INTO typed (id, tags) VALUES (:id, :tags)"), {"id": 200, "tags": ["r"]})
        tx.rollback()
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO typed (id, tags) VALUES (:id, :tags)"), {"id": 201, "tags": ["s", None]})
    with engine.begin() as conn:
        got = conn.execute(sa.text("SELECT id, tags FROM typed WHERE id >= 200")).all()
        conn.execute(sa.text("DELETE FROM typed WHERE id >= 200"))
    return got


check("sqlalchemy transactions", sqlalchemy_transactions)
