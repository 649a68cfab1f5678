"""Reads a view's change feed through SUBSCRIBE cursors with psycopg2 and
psycopg 3, as Materialize's users do (DECLARE c CURSOR FOR SUBSCRIBE ...,
then FETCH ALL c WITH (timeout = ...)), and prints one line per check,
"name: value", for tests/tools to compare. The view m is
SELECT k, v FROM kv over a table kv holding (1, 10) and (2, 20); each
driver updates k = 2 and reads the feed until it has seen the change.

Invoked as: python3 subscribe.py <libpq DSN>
"""
import sys

import psycopg
import psycopg2

DSN = sys.argv[1]


def feed_checks(label, conn, writer, new_v):
    cur = conn.cursor()
    cur.execute("DECLARE c CURSOR FOR SUBSCRIBE m")
    cur.execute("FETCH ALL c WITH (timeout = '2s')")
    snap = cur.fetchall()
    print(f"{label} columns: {[d[0] for d in cur.description]}")
    print(f"{label} snapshot: {sorted((int(r[1]), r[2], r[3]) for r in snap)}")
    wcur = writer.cursor()
    wcur.execute("UPDATE kv SET v = %s WHERE k = 2", (new_v,))
    changes = []
    for _ in range(30):
        cur.execute("FETCH ALL c WITH (timeout = '1s')")
        changes += [(int(r[1]), r[2], r[3]) for r in cur.fetchall()]
        if len(changes) >= 2:
            break
    print(f"{label} changes: {changes}")
    cur.execute("CLOSE c")
    sys.stdout.flush()


def main():
    c2 = psycopg2.connect(DSN)
    c2.autocommit = True
    w2 = psycopg2.connect(DSN)
    w2.autocommit = True
    feed_checks("psycopg2", c2, w2, 21)
    with psycopg.connect(DSN, autocommit=True) as c3, psycopg.connect(DSN, autocommit=True) as w3:
        feed_checks("psycopg3", c3, w3, 22)


main()
