package pgcatalog

// BuiltinProcData is pg_proc of PostgreSQL 15 (pg_catalog) for the names
// of the functions, aggregates and window functions streamdb implements:
// oid|name|kind volatility parallel retset|return type|argument types|prosrc|description.
// pg_proc.go keeps the rows whose argument types streamdb has and
// whose call its function registry accepts. Taken from PostgreSQL 15.18 with
// a query on pg_proc joined to pg_description.
const BuiltinProcData = `
1394|abs|fisf|700|700|float4abs|absolute value
1395|abs|fisf|701|701|float8abs|absolute value
1396|abs|fisf|20|20|int8abs|absolute value
1397|abs|fisf|23|23|int4abs|absolute value
1398|abs|fisf|21|21|int2abs|absolute value
1705|abs|fisf|1700|1700|numeric_abs|absolute value
1181|age|fsrf|23|28|xid_age|age of a transaction ID, in transactions before current transaction
1199|age|fisf|1186|1184 1184|timestamptz_age|date difference preserving months and years
1386|age|fssf|1186|1184||date difference from today preserving months and years
2058|age|fisf|1186|1114 1114|timestamp_age|date difference preserving months and years
2059|age|fssf|1186|1114||date difference from today preserving months and years
2335|array_agg|aisf|2277|2776|aggregate_dummy|concatenate aggregate input into an array
4053|array_agg|aisf|2277|2277|aggregate_dummy|concatenate aggregate input into an array
2176|array_length|fisf|23|2277 23|array_length|array length
2091|array_lower|fisf|23|2277 23|array_lower|array lower dimension
384|array_to_string|fssf|25|2277 25 25|array_to_text_null|concatenate array elements, using delimiter and null string, into text
395|array_to_string|fssf|25|2277 25|array_to_text|concatenate array elements, using delimiter, into text
2092|array_upper|fisf|23|2277 23|array_upper|array upper dimension
1620|ascii|fisf|23|25|ascii|convert first char to int4
2100|avg|aisf|1700|20|aggregate_dummy|the average (arithmetic mean) as numeric of all bigint values
2101|avg|aisf|1700|23|aggregate_dummy|the average (arithmetic mean) as numeric of all integer values
2102|avg|aisf|1700|21|aggregate_dummy|the average (arithmetic mean) as numeric of all smallint values
2103|avg|aisf|1700|1700|aggregate_dummy|the average (arithmetic mean) as numeric of all numeric values
2104|avg|aisf|701|700|aggregate_dummy|the average (arithmetic mean) as float8 of all float4 values
2105|avg|aisf|701|701|aggregate_dummy|the average (arithmetic mean) as float8 of all float8 values
2106|avg|aisf|1186|1186|aggregate_dummy|the average (arithmetic mean) as interval of all interval values
2517|bool_and|aisf|16|16|aggregate_dummy|boolean-and aggregate
2518|bool_or|aisf|16|16|aggregate_dummy|boolean-or aggregate
884|btrim|fisf|25|25 25|btrim|trim selected characters from both ends of string
885|btrim|fisf|25|25|btrim1|trim spaces from both ends of string
2015|btrim|fisf|17|17 17|byteatrim|trim selected bytes from both ends of string
3179|cardinality|fisf|23|2277|array_cardinality|array cardinality
1345|cbrt|fisf|701|701|dcbrt|cube root
1711|ceil|fisf|1700|1700|numeric_ceil|nearest integer >= value
2308|ceil|fisf|701|701|dceil|nearest integer >= value
2167|ceiling|fisf|1700|1700|numeric_ceil|nearest integer >= value
2320|ceiling|fisf|701|701|dceil|nearest integer >= value
1372|char_length|fisf|23|1042|bpcharlen|character length
1381|char_length|fisf|23|25|textlen|character length
1367|character_length|fisf|23|1042|bpcharlen|character length
1369|character_length|fisf|23|25|textlen|character length
1621|chr|fisf|25|23|chr|convert int4 to char
2649|clock_timestamp|fvsf|1184||clock_timestamp|current clock time
1216|col_description|fssf|25|26 23||get description for table column
3058|concat|fssf|25|2276|text_concat|concatenate values
3059|concat_ws|fssf|25|25 2276|text_concat_ws|concatenate values with separators
2147|count|aisf|20|2276|aggregate_dummy|number of input rows for which the input expression is not null
2803|count|aisf|20||aggregate_dummy|number of input rows
3104|cume_dist|wisf|701||window_cume_dist|fractional row number within partition
3990|cume_dist|aisf|701|2276|aggregate_dummy|cumulative distribution of hypothetical row
861|current_database|fssf|19||current_database|name of the current database
1402|current_schema|fsuf|19||current_schema|current schema name
1403|current_schemas|fsuf|1003|16|current_schemas|current schema search list
2077|current_setting|fssf|25|25|show_config_by_name|SHOW X as a function
3294|current_setting|fssf|25|25 16|show_config_by_name_missing_ok|SHOW X as a function, optionally no error for missing variable
745|current_user|fssf|19||current_user|current user name
1171|date_part|fssf|701|25 1184|timestamptz_part|extract field from timestamp with time zone
1172|date_part|fisf|701|25 1186|interval_part|extract field from interval
1273|date_part|fisf|701|25 1266|timetz_part|extract field from time with time zone
1384|date_part|fisf|701|25 1082||extract field from date
1385|date_part|fisf|701|25 1083|time_part|extract field from time
2021|date_part|fisf|701|25 1114|timestamp_part|extract field from timestamp
1217|date_trunc|fssf|1184|25 1184|timestamptz_trunc|truncate timestamp with time zone to specified units
1218|date_trunc|fisf|1186|25 1186|interval_trunc|truncate interval to specified units
1284|date_trunc|fssf|1184|25 1184 25|timestamptz_trunc_zone|truncate timestamp with time zone to specified units in specified time zone
2020|date_trunc|fisf|1114|25 1114|timestamp_trunc|truncate timestamp to specified units
1947|decode|fisf|17|25 25|binary_decode|convert ascii-encoded text string into bytea value
1608|degrees|fisf|701|701|degrees|radians to degrees
3102|dense_rank|wisf|20||window_dense_rank|integer rank without gaps
3992|dense_rank|aisf|20|2276|aggregate_dummy|rank of hypothetical row without gaps
1973|div|fisf|1700|1700 1700|numeric_div_trunc|trunc(x/y)
1946|encode|fisf|25|17 25|binary_encode|convert bytea value into some ascii-only text string
2519|every|aisf|16|16|aggregate_dummy|boolean-and aggregate
1347|exp|fisf|701|701|dexp|natural exponential (e^x)
1732|exp|fisf|1700|1700|numeric_exp|natural exponential (e^x)
6199|extract|fisf|1700|25 1082|extract_date|extract field from date
6200|extract|fisf|1700|25 1083|extract_time|extract field from time
6201|extract|fisf|1700|25 1266|extract_timetz|extract field from time with time zone
6202|extract|fisf|1700|25 1114|extract_timestamp|extract field from timestamp
6203|extract|fssf|1700|25 1184|extract_timestamptz|extract field from timestamp with time zone
6204|extract|fisf|1700|25 1186|extract_interval|extract field from interval
1376|factorial|fisf|1700|20|numeric_fac|factorial
3112|first_value|wisf|2283|2283|window_first_value|fetch the first row value
1712|floor|fisf|1700|1700|numeric_floor|nearest integer <= value
2309|floor|fisf|701|701|dfloor|nearest integer <= value
3539|format|fssf|25|25 2276|text_format|format text message
3540|format|fssf|25|25|text_format_nv|format text message
1081|format_type|fssf|25|26 23|format_type|format a type oid and atttypmod to canonical SQL
5044|gcd|fisf|23|23 23|int4gcd|greatest common divisor
5045|gcd|fisf|20|20 20|int8gcd|greatest common divisor
5048|gcd|fisf|1700|1700 1700|numeric_gcd|greatest common divisor
3432|gen_random_uuid|fvsf|2950||gen_random_uuid|generate random UUID
938|generate_series|fist|1114|1114 1114 1186|generate_series_timestamp|non-persistent series generator
939|generate_series|fsst|1184|1184 1184 1186|generate_series_timestamptz|non-persistent series generator
1066|generate_series|fist|23|23 23 23|generate_series_step_int4|non-persistent series generator
1067|generate_series|fist|23|23 23|generate_series_int4|non-persistent series generator
1068|generate_series|fist|20|20 20 20|generate_series_step_int8|non-persistent series generator
1069|generate_series|fist|20|20 20|generate_series_int8|non-persistent series generator
3259|generate_series|fist|1700|1700 1700 1700|generate_series_step_numeric|non-persistent series generator
3260|generate_series|fist|1700|1700 1700|generate_series_numeric|non-persistent series generator
3024|has_any_column_privilege|fssf|16|19 25 25|has_any_column_privilege_name_name|user privilege on any column by username, rel name
3025|has_any_column_privilege|fssf|16|19 26 25|has_any_column_privilege_name_id|user privilege on any column by username, rel oid
3026|has_any_column_privilege|fssf|16|26 25 25|has_any_column_privilege_id_name|user privilege on any column by user oid, rel name
3027|has_any_column_privilege|fssf|16|26 26 25|has_any_column_privilege_id_id|user privilege on any column by user oid, rel oid
3028|has_any_column_privilege|fssf|16|25 25|has_any_column_privilege_name|current user privilege on any column by rel name
3029|has_any_column_privilege|fssf|16|26 25|has_any_column_privilege_id|current user privilege on any column by rel oid
3012|has_column_privilege|fssf|16|19 25 25 25|has_column_privilege_name_name_name|user privilege on column by username, rel name, col name
3013|has_column_privilege|fssf|16|19 25 21 25|has_column_privilege_name_name_attnum|user privilege on column by username, rel name, col attnum
3014|has_column_privilege|fssf|16|19 26 25 25|has_column_privilege_name_id_name|user privilege on column by username, rel oid, col name
3015|has_column_privilege|fssf|16|19 26 21 25|has_column_privilege_name_id_attnum|user privilege on column by username, rel oid, col attnum
3016|has_column_privilege|fssf|16|26 25 25 25|has_column_privilege_id_name_name|user privilege on column by user oid, rel name, col name
3017|has_column_privilege|fssf|16|26 25 21 25|has_column_privilege_id_name_attnum|user privilege on column by user oid, rel name, col attnum
3018|has_column_privilege|fssf|16|26 26 25 25|has_column_privilege_id_id_name|user privilege on column by user oid, rel oid, col name
3019|has_column_privilege|fssf|16|26 26 21 25|has_column_privilege_id_id_attnum|user privilege on column by user oid, rel oid, col attnum
3020|has_column_privilege|fssf|16|25 25 25|has_column_privilege_name_name|current user privilege on column by rel name, col name
3021|has_column_privilege|fssf|16|25 21 25|has_column_privilege_name_attnum|current user privilege on column by rel name, col attnum
3022|has_column_privilege|fssf|16|26 25 25|has_column_privilege_id_name|current user privilege on column by rel oid, col name
3023|has_column_privilege|fssf|16|26 21 25|has_column_privilege_id_attnum|current user privilege on column by rel oid, col attnum
2250|has_database_privilege|fssf|16|19 25 25|has_database_privilege_name_name|user privilege on database by username, database name
2251|has_database_privilege|fssf|16|19 26 25|has_database_privilege_name_id|user privilege on database by username, database oid
2252|has_database_privilege|fssf|16|26 25 25|has_database_privilege_id_name|user privilege on database by user oid, database name
2253|has_database_privilege|fssf|16|26 26 25|has_database_privilege_id_id|user privilege on database by user oid, database oid
2254|has_database_privilege|fssf|16|25 25|has_database_privilege_name|current user privilege on database by database name
2255|has_database_privilege|fssf|16|26 25|has_database_privilege_id|current user privilege on database by database oid
2256|has_function_privilege|fssf|16|19 25 25|has_function_privilege_name_name|user privilege on function by username, function name
2257|has_function_privilege|fssf|16|19 26 25|has_function_privilege_name_id|user privilege on function by username, function oid
2258|has_function_privilege|fssf|16|26 25 25|has_function_privilege_id_name|user privilege on function by user oid, function name
2259|has_function_privilege|fssf|16|26 26 25|has_function_privilege_id_id|user privilege on function by user oid, function oid
2260|has_function_privilege|fssf|16|25 25|has_function_privilege_name|current user privilege on function by function name
2261|has_function_privilege|fssf|16|26 25|has_function_privilege_id|current user privilege on function by function oid
2268|has_schema_privilege|fssf|16|19 25 25|has_schema_privilege_name_name|user privilege on schema by username, schema name
2269|has_schema_privilege|fssf|16|19 26 25|has_schema_privilege_name_id|user privilege on schema by username, schema oid
2270|has_schema_privilege|fssf|16|26 25 25|has_schema_privilege_id_name|user privilege on schema by user oid, schema name
2271|has_schema_privilege|fssf|16|26 26 25|has_schema_privilege_id_id|user privilege on schema by user oid, schema oid
2272|has_schema_privilege|fssf|16|25 25|has_schema_privilege_name|current user privilege on schema by schema name
2273|has_schema_privilege|fssf|16|26 25|has_schema_privilege_id|current user privilege on schema by schema oid
1922|has_table_privilege|fssf|16|19 25 25|has_table_privilege_name_name|user privilege on relation by username, rel name
1923|has_table_privilege|fssf|16|19 26 25|has_table_privilege_name_id|user privilege on relation by username, rel oid
1924|has_table_privilege|fssf|16|26 25 25|has_table_privilege_id_name|user privilege on relation by user oid, rel name
1925|has_table_privilege|fssf|16|26 26 25|has_table_privilege_id_id|user privilege on relation by user oid, rel oid
1926|has_table_privilege|fssf|16|25 25|has_table_privilege_name|current user privilege on relation by rel name
1927|has_table_privilege|fssf|16|26 25|has_table_privilege_id|current user privilege on relation by rel oid
1295|justify_days|fisf|1186|1186|interval_justify_days|promote groups of 30 days to numbers of months
1175|justify_hours|fisf|1186|1186|interval_justify_hours|promote groups of 24 hours to numbers of days
2711|justify_interval|fisf|1186|1186|interval_justify_interval|promote groups of 24 hours to numbers of days and promote groups of 30 days to numbers of months
3106|lag|wisf|2283|2283|window_lag|fetch the preceding row value
3107|lag|wisf|2283|2283 23|window_lag_with_offset|fetch the Nth preceding row value
3108|lag|wisf|5077|5077 23 5077|window_lag_with_offset_and_default|fetch the Nth preceding row value with default
3113|last_value|wisf|2283|2283|window_last_value|fetch the last row value
5046|lcm|fisf|23|23 23|int4lcm|least common multiple
5047|lcm|fisf|20|20 20|int8lcm|least common multiple
5049|lcm|fisf|1700|1700 1700|numeric_lcm|least common multiple
3109|lead|wisf|2283|2283|window_lead|fetch the following row value
3110|lead|wisf|2283|2283 23|window_lead_with_offset|fetch the Nth following row value
3111|lead|wisf|5077|5077 23 5077|window_lead_with_offset_and_default|fetch the Nth following row value with default
3060|left|fisf|25|25 23|text_left|extract the first n characters
1317|length|fisf|23|25|textlen|length
1318|length|fisf|23|1042|bpcharlen|character length
1530|length|fisf|701|601|lseg_length|distance between endpoints
1531|length|fisf|701|602|path_length|sum of path segments
1681|length|fisf|23|1560|bitlength|bitstring length
1713|length|fssf|23|17 19|length_in_encoding|length of string in specified encoding
2010|length|fisf|23|17|byteaoctetlen|octet length
3711|length|fisf|23|3614|tsvector_length|number of lexemes
1341|ln|fisf|701|701|dlog1|natural logarithm
1734|ln|fisf|1700|1700|numeric_ln|natural logarithm
1340|log|fisf|701|701|dlog10|base 10 logarithm
1736|log|fisf|1700|1700 1700|numeric_log|logarithm base m of n
1741|log|fisf|1700|1700||base 10 logarithm
1194|log10|fisf|701|701|dlog10|base 10 logarithm
1481|log10|fisf|1700|1700||base 10 logarithm
870|lower|fisf|25|25|lower|lowercase
3848|lower|fisf|2283|3831|range_lower|lower bound of range
4235|lower|fisf|2283|4537|multirange_lower|lower bound of multirange
873|lpad|fisf|25|25 23 25|lpad|left-pad string to length
879|lpad|fisf|25|25 23||left-pad string to length
875|ltrim|fisf|25|25 25|ltrim|trim selected characters from left end of string
881|ltrim|fisf|25|25|ltrim1|trim spaces from left end of string
6195|ltrim|fisf|17|17 17|bytealtrim|trim selected bytes from left end of string
3846|make_date|fisf|1082|23 23 23|make_date|construct date
3464|make_interval|fisf|1186|23 23 23 23 23 23 701|make_interval|construct interval
3461|make_timestamp|fisf|1114|23 23 23 23 23 701|make_timestamp|construct timestamp
2050|max|aisf|2277|2277|aggregate_dummy|maximum value of all anyarray input values
2115|max|aisf|20|20|aggregate_dummy|maximum value of all bigint input values
2116|max|aisf|23|23|aggregate_dummy|maximum value of all integer input values
2117|max|aisf|21|21|aggregate_dummy|maximum value of all smallint input values
2118|max|aisf|26|26|aggregate_dummy|maximum value of all oid input values
2119|max|aisf|700|700|aggregate_dummy|maximum value of all float4 input values
2120|max|aisf|701|701|aggregate_dummy|maximum value of all float8 input values
2122|max|aisf|1082|1082|aggregate_dummy|maximum value of all date input values
2123|max|aisf|1083|1083|aggregate_dummy|maximum value of all time input values
2124|max|aisf|1266|1266|aggregate_dummy|maximum value of all time with time zone input values
2125|max|aisf|790|790|aggregate_dummy|maximum value of all money input values
2126|max|aisf|1114|1114|aggregate_dummy|maximum value of all timestamp input values
2127|max|aisf|1184|1184|aggregate_dummy|maximum value of all timestamp with time zone input values
2128|max|aisf|1186|1186|aggregate_dummy|maximum value of all interval input values
2129|max|aisf|25|25|aggregate_dummy|maximum value of all text input values
2130|max|aisf|1700|1700|aggregate_dummy|maximum value of all numeric input values
2244|max|aisf|1042|1042|aggregate_dummy|maximum value of all bpchar input values
2797|max|aisf|27|27|aggregate_dummy|maximum value of all tid input values
3526|max|aisf|3500|3500|aggregate_dummy|maximum value of all enum input values
3564|max|aisf|869|869|aggregate_dummy|maximum value of all inet input values
4189|max|aisf|3220|3220|aggregate_dummy|maximum value of all pg_lsn input values
5099|max|aisf|5069|5069|aggregate_dummy|maximum value of all xid8 input values
2311|md5|fisf|25|25|md5_text|MD5 hash
2321|md5|fisf|25|17|md5_bytea|MD5 hash
2051|min|aisf|2277|2277|aggregate_dummy|minimum value of all anyarray input values
2131|min|aisf|20|20|aggregate_dummy|minimum value of all bigint input values
2132|min|aisf|23|23|aggregate_dummy|minimum value of all integer input values
2133|min|aisf|21|21|aggregate_dummy|minimum value of all smallint input values
2134|min|aisf|26|26|aggregate_dummy|minimum value of all oid input values
2135|min|aisf|700|700|aggregate_dummy|minimum value of all float4 input values
2136|min|aisf|701|701|aggregate_dummy|minimum value of all float8 input values
2138|min|aisf|1082|1082|aggregate_dummy|minimum value of all date input values
2139|min|aisf|1083|1083|aggregate_dummy|minimum value of all time input values
2140|min|aisf|1266|1266|aggregate_dummy|minimum value of all time with time zone input values
2141|min|aisf|790|790|aggregate_dummy|minimum value of all money input values
2142|min|aisf|1114|1114|aggregate_dummy|minimum value of all timestamp input values
2143|min|aisf|1184|1184|aggregate_dummy|minimum value of all timestamp with time zone input values
2144|min|aisf|1186|1186|aggregate_dummy|minimum value of all interval input values
2145|min|aisf|25|25|aggregate_dummy|minimum value of all text values
2146|min|aisf|1700|1700|aggregate_dummy|minimum value of all numeric input values
2245|min|aisf|1042|1042|aggregate_dummy|minimum value of all bpchar input values
2798|min|aisf|27|27|aggregate_dummy|minimum value of all tid input values
3527|min|aisf|3500|3500|aggregate_dummy|minimum value of all enum input values
3565|min|aisf|869|869|aggregate_dummy|minimum value of all inet input values
4190|min|aisf|3220|3220|aggregate_dummy|minimum value of all pg_lsn input values
5100|min|aisf|5069|5069|aggregate_dummy|minimum value of all xid8 input values
940|mod|fisf|21|21 21|int2mod|modulus
941|mod|fisf|23|23 23|int4mod|modulus
947|mod|fisf|20|20 20|int8mod|modulus
1728|mod|fisf|1700|1700 1700|numeric_mod|modulus
3984|mode|aisf|2283|2283|aggregate_dummy|most common value
1299|now|fssf|1184||now|current transaction time
3114|nth_value|wisf|2283|2283 23|window_nth_value|fetch the Nth row value
3105|ntile|wisf|23|23|window_ntile|split rows into N groups
1215|obj_description|fssf|25|26 19||get description for object id and catalog name
1348|obj_description|fssf|25|26||deprecated, use two-argument form instead
720|octet_length|fisf|23|17|byteaoctetlen|octet length
1374|octet_length|fisf|23|25|textoctetlen|octet length
1375|octet_length|fisf|23|1042|bpcharoctetlen|octet length
1682|octet_length|fisf|23|1560|bitoctetlength|octet length
1287|oid|fisf|26|20|i8tooid|convert int8 to oid
1268|parse_ident|fisf|1009|25 16|parse_ident|parse qualified identifier to array of identifiers
3103|percent_rank|wisf|701||window_percent_rank|fractional rank within partition
3988|percent_rank|aisf|701|2276|aggregate_dummy|fractional rank of hypothetical row
3974|percentile_cont|aisf|701|701 701|aggregate_dummy|continuous distribution percentile
3976|percentile_cont|aisf|1186|701 1186|aggregate_dummy|continuous distribution percentile
3980|percentile_cont|aisf|1022|1022 701|aggregate_dummy|multiple continuous percentiles
3982|percentile_cont|aisf|1187|1022 1186|aggregate_dummy|multiple continuous percentiles
3972|percentile_disc|aisf|2283|701 2283|aggregate_dummy|discrete percentile
3978|percentile_disc|aisf|2277|1022 2283|aggregate_dummy|multiple discrete percentiles
2026|pg_backend_pid|fsrf|23||pg_backend_pid|statistics: current backend PID
2561|pg_blocking_pids|fvsf|1007|23|pg_blocking_pids|get array of PIDs of sessions blocking specified backend PID from acquiring a heavyweight lock
1597|pg_encoding_to_char|fssf|19|23|PG_encoding_to_char|convert encoding id to encoding name
2081|pg_function_is_visible|fssf|16|26|pg_function_is_visible|is function visible in search path?
1387|pg_get_constraintdef|fssf|25|26|pg_get_constraintdef|constraint description
2508|pg_get_constraintdef|fssf|25|26 16|pg_get_constraintdef_ext|constraint description with pretty-print option
1716|pg_get_expr|fssf|25|194 26|pg_get_expr|deparse an encoded expression
2509|pg_get_expr|fssf|25|194 26 16|pg_get_expr_ext|deparse an encoded expression with pretty-print option
2162|pg_get_function_arguments|fssf|25|26|pg_get_function_arguments|argument list of a function
2232|pg_get_function_identity_arguments|fssf|25|26|pg_get_function_identity_arguments|identity argument list of a function
2165|pg_get_function_result|fssf|25|26|pg_get_function_result|result type of a function
1643|pg_get_indexdef|fssf|25|26|pg_get_indexdef|index description
2507|pg_get_indexdef|fssf|25|26 23 16|pg_get_indexdef_ext|index description (full create statement or single expression) with pretty-print option
1642|pg_get_userbyid|fssf|19|26|pg_get_userbyid|role name by OID (with fallback)
1640|pg_get_viewdef|fsrf|25|25|pg_get_viewdef_name|select statement of a view
1641|pg_get_viewdef|fsrf|25|26|pg_get_viewdef|select statement of a view
2505|pg_get_viewdef|fsrf|25|25 16|pg_get_viewdef_name_ext|select statement of a view with pretty-print option
2506|pg_get_viewdef|fsrf|25|26 16|pg_get_viewdef_ext|select statement of a view with pretty-print option
3159|pg_get_viewdef|fsrf|25|26 23|pg_get_viewdef_wrap|select statement of a view with pretty-printing and specified line wrapping
2079|pg_table_is_visible|fssf|16|26|pg_table_is_visible|is table visible in search path?
2080|pg_type_is_visible|fssf|16|26|pg_type_is_visible|is type visible in search path?
1619|pg_typeof|fssf|2206|2276|pg_typeof|type of the argument
1610|pi|fisf|701||dpi|PI
1346|pow|fisf|701|701 701|dpow|exponentiation
1738|pow|fisf|1700|1700 1700|numeric_power|exponentiation
1368|power|fisf|701|701 701|dpow|exponentiation
2169|power|fisf|1700|1700 1700|numeric_power|exponentiation
1282|quote_ident|fisf|25|25|quote_ident|quote an identifier for usage in a querystring
1283|quote_literal|fisf|25|25|quote_literal|quote a literal for usage in a querystring
1285|quote_literal|fssf|25|2283|select pg_catalog.quote_literal($1::pg_catalog.text)|quote a data value for usage in a querystring
1609|radians|fisf|701|701|radians|degrees to radians
1598|random|fvrf|701||drandom|random value
3101|rank|wisf|20||window_rank|integer rank with gaps
3986|rank|aisf|20|2276|aggregate_dummy|rank of hypothetical row
1079|regclass|fssf|2205|25|text_regclass|convert text to regclass
6254|regexp_count|fisf|23|25 25|regexp_count_no_start|count regexp matches
6255|regexp_count|fisf|23|25 25 23|regexp_count_no_flags|count regexp matches
6256|regexp_count|fisf|23|25 25 23 25|regexp_count|count regexp matches
6263|regexp_like|fisf|16|25 25|regexp_like_no_flags|test for regexp match
6264|regexp_like|fisf|16|25 25 25|regexp_like|test for regexp match
3396|regexp_match|fisf|1009|25 25|regexp_match_no_flags|find first match for regexp
3397|regexp_match|fisf|1009|25 25 25|regexp_match|find first match for regexp
2763|regexp_matches|fist|1009|25 25|regexp_matches_no_flags|find match(es) for regexp
2764|regexp_matches|fist|1009|25 25 25|regexp_matches|find match(es) for regexp
2284|regexp_replace|fisf|25|25 25 25|textregexreplace_noopt|replace text using regexp
2285|regexp_replace|fisf|25|25 25 25 25|textregexreplace|replace text using regexp
6251|regexp_replace|fisf|25|25 25 25 23 23 25|textregexreplace_extended|replace text using regexp
6252|regexp_replace|fisf|25|25 25 25 23 23|textregexreplace_extended_no_flags|replace text using regexp
6253|regexp_replace|fisf|25|25 25 25 23|textregexreplace_extended_no_n|replace text using regexp
2767|regexp_split_to_array|fisf|1009|25 25|regexp_split_to_array_no_flags|split string by pattern
2768|regexp_split_to_array|fisf|1009|25 25 25|regexp_split_to_array|split string by pattern
2765|regexp_split_to_table|fist|25|25 25|regexp_split_to_table_no_flags|split string by pattern
2766|regexp_split_to_table|fist|25|25 25 25|regexp_split_to_table|split string by pattern
1622|repeat|fisf|25|25 23|repeat|replicate string n times
2087|replace|fisf|25|25 25 25|replace_text|replace all occurrences in string of old_substr with new_substr
3062|reverse|fisf|25|25|text_reverse|reverse text
3061|right|fisf|25|25 23|text_right|extract the last n characters
1342|round|fisf|701|701|dround|round to nearest integer
1707|round|fisf|1700|1700 23|numeric_round|value rounded to 'scale'
1708|round|fisf|1700|1700||value rounded to 'scale' of zero
3100|row_number|wisf|20||window_row_number|row number within partition
874|rpad|fisf|25|25 23 25|rpad|right-pad string to length
880|rpad|fisf|25|25 23||right-pad string to length
876|rtrim|fisf|25|25 25|rtrim|trim selected characters from right end of string
882|rtrim|fisf|25|25|rtrim1|trim spaces from right end of string
6196|rtrim|fisf|17|17 17|byteartrim|trim selected bytes from right end of string
746|session_user|fssf|19||session_user|session user name
2078|set_config|fvuf|25|25 25 16|set_config_by_name|SET X as a function
1993|shobj_description|fssf|25|26 19||get description for object id and shared catalog name
1706|sign|fisf|1700|1700|numeric_sign|sign of value
2310|sign|fisf|701|701|dsign|sign of value
2088|split_part|fisf|25|25 25 23|split_part|split string by field_sep and return field_num
1344|sqrt|fisf|701|701|dsqrt|square root
1730|sqrt|fisf|1700|1700|numeric_sqrt|square root
3696|starts_with|fisf|16|25 25|text_starts_with|implementation of ^@ operator
2648|statement_timestamp|fssf|1184||statement_timestamp|current statement time
2154|stddev|aisf|1700|20|aggregate_dummy|historical alias for stddev_samp
2155|stddev|aisf|1700|23|aggregate_dummy|historical alias for stddev_samp
2156|stddev|aisf|1700|21|aggregate_dummy|historical alias for stddev_samp
2157|stddev|aisf|701|700|aggregate_dummy|historical alias for stddev_samp
2158|stddev|aisf|701|701|aggregate_dummy|historical alias for stddev_samp
2159|stddev|aisf|1700|1700|aggregate_dummy|historical alias for stddev_samp
2724|stddev_pop|aisf|1700|20|aggregate_dummy|population standard deviation of bigint input values
2725|stddev_pop|aisf|1700|23|aggregate_dummy|population standard deviation of integer input values
2726|stddev_pop|aisf|1700|21|aggregate_dummy|population standard deviation of smallint input values
2727|stddev_pop|aisf|701|700|aggregate_dummy|population standard deviation of float4 input values
2728|stddev_pop|aisf|701|701|aggregate_dummy|population standard deviation of float8 input values
2729|stddev_pop|aisf|1700|1700|aggregate_dummy|population standard deviation of numeric input values
2712|stddev_samp|aisf|1700|20|aggregate_dummy|sample standard deviation of bigint input values
2713|stddev_samp|aisf|1700|23|aggregate_dummy|sample standard deviation of integer input values
2714|stddev_samp|aisf|1700|21|aggregate_dummy|sample standard deviation of smallint input values
2715|stddev_samp|aisf|701|700|aggregate_dummy|sample standard deviation of float4 input values
2716|stddev_samp|aisf|701|701|aggregate_dummy|sample standard deviation of float8 input values
2717|stddev_samp|aisf|1700|1700|aggregate_dummy|sample standard deviation of numeric input values
3538|string_agg|aisf|25|25 25|aggregate_dummy|concatenate aggregate input into a string
3545|string_agg|aisf|17|17 17|aggregate_dummy|concatenate aggregate input into a bytea
376|string_to_array|fisf|1009|25 25 25|text_to_array_null|split delimited text, with null string
394|string_to_array|fisf|1009|25 25|text_to_array|split delimited text
868|strpos|fisf|23|25 25|textpos|position of substring
877|substr|fisf|25|25 23 23|text_substr|extract portion of string
883|substr|fisf|25|25 23|text_substr_no_len|extract portion of string
2085|substr|fisf|17|17 23 23|bytea_substr|extract portion of string
2086|substr|fisf|17|17 23|bytea_substr_no_len|extract portion of string
936|substring|fisf|25|25 23 23|text_substr|extract portion of string
937|substring|fisf|25|25 23|text_substr_no_len|extract portion of string
1680|substring|fisf|1560|1560 23 23|bitsubstr|extract portion of bitstring
1699|substring|fisf|1560|1560 23|bitsubstr_no_len|extract portion of bitstring
2012|substring|fisf|17|17 23 23|bytea_substr|extract portion of string
2013|substring|fisf|17|17 23|bytea_substr_no_len|extract portion of string
2073|substring|fisf|25|25 25|textregexsubstr|extract text matching regular expression
2074|substring|fisf|25|25 25 25||extract text matching SQL regular expression
2107|sum|aisf|1700|20|aggregate_dummy|sum as numeric across all bigint input values
2108|sum|aisf|20|23|aggregate_dummy|sum as bigint across all integer input values
2109|sum|aisf|20|21|aggregate_dummy|sum as bigint across all smallint input values
2110|sum|aisf|700|700|aggregate_dummy|sum as float4 across all float4 input values
2111|sum|aisf|701|701|aggregate_dummy|sum as float8 across all float8 input values
2112|sum|aisf|790|790|aggregate_dummy|sum as money across all money input values
2113|sum|aisf|1186|1186|aggregate_dummy|sum as interval across all interval input values
2114|sum|aisf|1700|1700|aggregate_dummy|sum as numeric across all numeric input values
1768|to_char|fssf|25|1186 25|interval_to_char|format interval to text
1770|to_char|fssf|25|1184 25|timestamptz_to_char|format timestamp with time zone to text
1772|to_char|fssf|25|1700 25|numeric_to_char|format numeric to text
1773|to_char|fssf|25|23 25|int4_to_char|format int4 to text
1774|to_char|fssf|25|20 25|int8_to_char|format int8 to text
1775|to_char|fssf|25|700 25|float4_to_char|format float4 to text
1776|to_char|fssf|25|701 25|float8_to_char|format float8 to text
2049|to_char|fssf|25|1114 25|timestamp_to_char|format timestamp to text
1780|to_date|fssf|1082|25 25|to_date|convert text to date
1158|to_timestamp|fisf|1184|701|float8_timestamptz|convert UNIX epoch to timestamptz
1778|to_timestamp|fssf|1184|25 25|to_timestamp|convert text to timestamp with time zone
2647|transaction_timestamp|fssf|1184||now|current transaction time
878|translate|fisf|25|25 25 25|translate|map a set of characters appearing in string
753|trunc|fisf|829|829|macaddr_trunc|MACADDR manufacturer fields
1343|trunc|fisf|701|701|dtrunc|truncate to integer
1709|trunc|fisf|1700|1700 23|numeric_trunc|value truncated to 'scale'
1710|trunc|fisf|1700|1700||value truncated to 'scale' of zero
4112|trunc|fisf|774|774|macaddr8_trunc|MACADDR8 manufacturer fields
1293|unnest|fist|3831|4537|multirange_unnest|expand multirange to set of ranges
2331|unnest|fist|2283|2277|array_unnest|expand array to set of rows
3322|unnest|fist|2249|3614|tsvector_unnest|expand tsvector to set of rows
871|upper|fisf|25|25|upper|uppercase
3849|upper|fisf|2283|3831|range_upper|upper bound of range
4236|upper|fisf|2283|4537|multirange_upper|upper bound of multirange
2718|var_pop|aisf|1700|20|aggregate_dummy|population variance of bigint input values (square of the population standard deviation)
2719|var_pop|aisf|1700|23|aggregate_dummy|population variance of integer input values (square of the population standard deviation)
2720|var_pop|aisf|1700|21|aggregate_dummy|population variance of smallint input values (square of the population standard deviation)
2721|var_pop|aisf|701|700|aggregate_dummy|population variance of float4 input values (square of the population standard deviation)
2722|var_pop|aisf|701|701|aggregate_dummy|population variance of float8 input values (square of the population standard deviation)
2723|var_pop|aisf|1700|1700|aggregate_dummy|population variance of numeric input values (square of the population standard deviation)
2641|var_samp|aisf|1700|20|aggregate_dummy|sample variance of bigint input values (square of the sample standard deviation)
2642|var_samp|aisf|1700|23|aggregate_dummy|sample variance of integer input values (square of the sample standard deviation)
2643|var_samp|aisf|1700|21|aggregate_dummy|sample variance of smallint input values (square of the sample standard deviation)
2644|var_samp|aisf|701|700|aggregate_dummy|sample variance of float4 input values (square of the sample standard deviation)
2645|var_samp|aisf|701|701|aggregate_dummy|sample variance of float8 input values (square of the sample standard deviation)
2646|var_samp|aisf|1700|1700|aggregate_dummy|sample variance of numeric input values (square of the sample standard deviation)
2148|variance|aisf|1700|20|aggregate_dummy|historical alias for var_samp
2149|variance|aisf|1700|23|aggregate_dummy|historical alias for var_samp
2150|variance|aisf|1700|21|aggregate_dummy|historical alias for var_samp
2151|variance|aisf|701|700|aggregate_dummy|historical alias for var_samp
2152|variance|aisf|701|701|aggregate_dummy|historical alias for var_samp
2153|variance|aisf|1700|1700|aggregate_dummy|historical alias for var_samp
89|version|fssf|25||pgsql_version|PostgreSQL version string
320|width_bucket|fisf|23|701 701 701 23|width_bucket_float8|bucket number of operand in equal-width histogram
2170|width_bucket|fisf|23|1700 1700 1700 23|width_bucket_numeric|bucket number of operand in equal-width histogram
3218|width_bucket|fisf|23|5077 5078|width_bucket_array|bucket number of operand given a sorted array of bucket lower bounds
5071|xid|fisf|28|5069|xid8toxid|convert xid8 to xid
`
