"""Reads rows through psycopg2 named (server-side) cursors, which send
DECLARE ... CURSOR [WITH HOLD] FOR, FETCH FORWARD n, MOVE and CLOSE, and
resets a session as connection poolers do (DISCARD ALL, DEALLOCATE ALL).
Prints one line per check, "name: value"; a failed check prints
"name: ERROR <SQLSTATE> <message>".

Invoked as: python3 cursors.py <libpq DSN>
"""
import sys

import psycopg2

DSN = sys.argv[1]


def check(name, fn):
    try:
        print(f"{name}: {fn()}")
    except Exception as e:  # report and go on: the test compares lines
        print(f"{name}: ERROR {getattr(e, 'pgcode', None)} {str(e).splitlines()[0]}")
    sys.stdout.flush()


conn = psycopg2.connect(DSN)


def named_in_block():
    with conn.cursor(name="walk") as cur:
        cur.itersize = 2
        cur.execute("SELECT k, v FROM items WHERE k <= %s ORDER BY k", (5,))
        first = cur.fetchmany(2)
        cur.scroll(1)  # MOVE 1
        rest = cur.fetchall()
    conn.commit()
    return first + rest


def iterate():
    with conn.cursor(name="iter") as cur:
        cur.itersize = 3
        cur.execute("SELECT k FROM items ORDER BY k")
        out = [r[0] for r in cur]
    conn.commit()
    return out


def with_hold():
    cur = conn.cursor(name="held", withhold=True)
    cur.execute("SELECT count(*) FROM items")
    conn.commit()
    n = cur.fetchone()[0]
    cur.close()
    return n


check("named cursor", named_in_block)
check("iterate", iterate)
check("withhold", with_hold)

conn.autocommit = True



def reset():
    cur = conn.cursor()
    cur.execute("DEALLOCATE ALL")
    a = cur.statusmessage
    cur.execute("DISCARD ALL")
    return [a, cur.statusmessage]


check("reset", reset)
conn.close()
