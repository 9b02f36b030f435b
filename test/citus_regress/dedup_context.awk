# compressx: test/citus_regress.sh applies this to the expected and the
# actual output of every test, after normalize_am.sed.  Citus's
# bin/normalize.sed deletes "DEBUG:  EventTriggerInvoke <oid>" lines (tests
# at client_min_messages DEBUG1) but keeps the CONTEXT block that follows
# each; compressx's own event triggers (sql_drop, ddl_command_end) fire too
# and leave one more copy of the same block.  Collapse runs of identical
# adjacent CONTEXT blocks (a "CONTEXT:" line and its continuation lines)
# into one.  The EventTriggerInvoke lines themselves go here already.
function finish() {
    if (cur != "") {
        if (cur != prev) print cur
        prev = cur
        cur = ""
    }
}
/^DEBUG:  EventTriggerInvoke [0-9]+$/ { next }
/^CONTEXT:  / { finish(); cur = $0; next }
cur != "" && /^(PL\/pgSQL function |SQL statement |SQL function |while executing command )/ {
    cur = cur "\n" $0; next
}
{ finish(); prev = ""; print }
END { finish() }
