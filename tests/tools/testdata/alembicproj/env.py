"""Alembic's environment: migrations run on the connection the caller
passes in config.attributes["connection"]."""
import os
import sys

from alembic import context

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import metadata_v2  # noqa: E402

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata_v2)
with context.begin_transaction():
    context.run_migrations()
