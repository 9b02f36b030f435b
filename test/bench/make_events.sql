-- JSON log events as a DBA reported them (issue 34, item 4): about 510
-- bytes each, with a UUID, a trace and a span id, a user agent, a path, a
-- status and a duration; a bigint primary key and an index on the time.
-- Deterministic (md5 and hashint4 of the row number, no random()).
--
--   psql -v rows=100000 -f test/bench/make_events.sql
--
-- Creates events (heap, pglz by default_toast_compression; inline: no
-- value reaches the TOAST threshold) and runs VACUUM ANALYZE on it.
\if :{?rows}
\else
\set rows 100000
\endif
CREATE TABLE events (id bigint PRIMARY KEY, ts timestamptz NOT NULL, event json NOT NULL);
INSERT INTO events
SELECT i, ts,
       json_build_object(
         'ts', to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         'level', (ARRAY['info', 'info', 'info', 'warn', 'error', 'debug'])[1 + (h & 2147483647) % 6],
         'service', (ARRAY['checkout', 'cart', 'search', 'auth', 'catalog', 'payments', 'shipping'])[1 + (h >> 3 & 2147483647) % 7],
         'host', format('web-%s', lpad(((h >> 5 & 2147483647) % 48)::text, 2, '0')),
         'event_id', md5('e' || i)::uuid,
         'trace_id', md5('t' || (i / 4)),
         'span_id', left(md5('s' || i), 16),
         'user_id', (h >> 7 & 2147483647) % 50000,
         'method', (ARRAY['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'])[1 + (h >> 9 & 2147483647) % 6],
         'path', format('/api/v2/%s/%s', (ARRAY['orders', 'items', 'users', 'sessions', 'search'])[1 + (h >> 11 & 2147483647) % 5],
                        (h >> 13 & 2147483647) % 100000),
         'status', (ARRAY[200, 200, 200, 200, 201, 204, 304, 400, 404, 500])[1 + (h >> 15 & 2147483647) % 10],
         'duration_ms', round(((h >> 17 & 2147483647) % 250000) / 100.0, 2),
         'bytes', (h >> 4 & 2147483647) % 65536,
         'user_agent', (ARRAY[
            'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
            'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15',
            'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
            'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
            'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36',
            'curl/8.4.0', 'python-requests/2.31.0'])[1 + (h >> 19 & 2147483647) % 7],
         'message', 'request ' || md5('m' || i) || ' done')
FROM (SELECT i, hashint4(i) AS h,
             timestamptz '2024-03-01 00:00:00+00' + i * interval '250 ms' AS ts
      FROM generate_series(1, :rows) i) s;
CREATE INDEX events_ts ON events (ts);
VACUUM ANALYZE events;
