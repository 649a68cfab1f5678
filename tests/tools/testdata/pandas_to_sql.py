"""pandas' DataFrame.to_sql with its defaults (the index written as a
column named index, with CREATE INDEX on it), then appended to, read back
through the index, and replaced. Prints "check: value" lines."""
import sys

import pandas as pd
from sqlalchemy import create_engine

eng = create_engine(sys.argv[1])
df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}, index=[10, 20, 30])
df.to_sql("pd_frame", eng)
df.to_sql("pd_frame", eng, if_exists="append")
back = pd.read_sql("SELECT * FROM pd_frame WHERE index = 20 ORDER BY a", eng)
print("rows at index 20:", back.values.tolist())
print("indexes:", pd.read_sql("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'pd_frame'", eng).values.tolist())
df.iloc[:1].to_sql("pd_frame", eng, if_exists="replace")
print("after replace:", pd.read_sql("SELECT count(*) AS n FROM pd_frame", eng)["n"].tolist())
