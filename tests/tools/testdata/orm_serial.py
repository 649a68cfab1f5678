"""Creates tables with SQLAlchemy's create_all (an Integer primary key
becomes SERIAL) and with the bigserial key Django's migrations use, and
writes rows through the ORM, which reads the generated keys back with
RETURNING. Prints one line per check, "name: value", for tests/tools to
compare; a check that fails prints "name: ERROR <SQLSTATE> <message>" and
the script goes on.

Invoked as: python3 orm_serial.py <libpq DSN>
"""
import sys

import psycopg2
import sqlalchemy as sa
from sqlalchemy.orm import Session, declarative_base

DSN = sys.argv[1]


def check(name, fn):
    try:
        print(f"{name}: {fn()}")
    except Exception as e:  # report and go on: the test compares lines
        orig = getattr(e, "orig", e)
        code = getattr(orig, "pgcode", None)
        print(f"{name}: ERROR {code} {str(e).splitlines()[0]}")
    sys.stdout.flush()


Base = declarative_base()


class User(Base):
    __tablename__ = "orm_users"
    id = sa.Column(sa.Integer, primary_key=True)
    name = sa.Column(sa.String(50), nullable=False)


class Item(Base):
    __tablename__ = "orm_items"
    id = sa.Column(sa.BigInteger, sa.Identity(always=True), primary_key=True)
    label = sa.Column(sa.String(20))


engine = sa.create_engine("postgresql+psycopg2://" + DSN.split("://", 1)[1])


def create_all():
    Base.metadata.create_all(engine)
    return sorted(sa.inspect(engine).get_table_names())


check("create_all", create_all)


def add_users():
    with Session(engine) as s:
        users = [User(name="ann"), User(name="bob"), User(name="cy")]
        s.add_all(users)
        s.commit()
        return [u.id for u in users]


check("orm ids", add_users)


def add_one():
    with Session(engine) as s:
        u = User(name="dee")
        s.add(u)
        s.flush()
        got = u.id
        s.commit()
        return got


check("orm flush id", add_one)
check("orm query", lambda: [(u.id, u.name) for u in Session(engine).query(User).order_by(User.id)])


def add_items():
    with Session(engine) as s:
        items = [Item(label="x"), Item(label="y")]
        s.add_all(items)
        s.commit()
        return [i.id for i in items]


check("identity ids", add_items)


def serial_sequence():
    with engine.connect() as c:
        return c.execute(sa.text("SELECT pg_get_serial_sequence('orm_users', 'id')")).scalar()


check("pg_get_serial_sequence", serial_sequence)


def django_migrations():
    # The table Django's migrate creates first, as it creates it.
    conn = psycopg2.connect(DSN)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute('CREATE TABLE "django_migrations" ("id" bigserial NOT NULL PRIMARY KEY, '
                '"app" varchar(255) NOT NULL, "name" varchar(255) NOT NULL, "applied" timestamp with time zone NOT NULL)')
    cur.execute('INSERT INTO "django_migrations" ("app", "name", "applied") VALUES (%s, %s, now()) RETURNING "django_migrations"."id"',
                ("contenttypes", "0001_initial"))
    first = cur.fetchone()[0]
    cur.execute('INSERT INTO "django_migrations" ("app", "name", "applied") VALUES (%s, %s, now()) RETURNING "django_migrations"."id"',
                ("auth", "0001_initial"))
    second = cur.fetchone()[0]
    conn.close()
    return [first, second]


check("django_migrations ids", django_migrations)
