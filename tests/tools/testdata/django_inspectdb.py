"""Runs Django's inspectdb (models from the database's tables, through
DatabaseIntrospection: the pg_attribute, pg_collation, pg_constraint and
pg_index queries and a cursor.description of each table) and prints its
output, so that tests/tools can compare it between streamdb and
PostgreSQL.

Invoked as: python3 django_inspectdb.py <host> <port> <user> <dbname> [table ...]
"""
import io
import sys

import django
from django.conf import settings

host, port, user, dbname = sys.argv[1:5]
settings.configure(
    DATABASES={"default": {"ENGINE": "django.db.backends.postgresql",
                           "HOST": host, "PORT": port, "USER": user, "NAME": dbname}},
    INSTALLED_APPS=[], USE_TZ=True, TIME_ZONE="UTC")
django.setup()

from django.core.management import call_command  # noqa: E402 (after setup)

out = io.StringIO()
call_command("inspectdb", *sys.argv[5:], stdout=out)
print(out.getvalue())
