package cx;

import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;

/**
 * Runs Debezium's embedded engine (PostgreSQL connector, plugin.name =
 * pgoutput) until it has handed over a given number of change events, or
 * stops by itself, or the file <events-file>.stop appears, or a time limit
 * passes; writes each event as one line
 * "topic TAB value" (JSON, no schemas) to a file, and says how it ended on
 * standard output:
 *
 *   EVENTS n
 *   STOPPED BY ITSELF success=<true|false> message=<the engine's message>
 * or "STOPPED by the check" when it had what it waited for.
 *
 * Arguments: port slot offsets-file events-file expected-events
 * timeout-seconds snapshot-mode.  run.sh drives it (doc/logical-replication.md).
 */
public final class DebeziumCheck
{
	public static void main(String[] args) throws Exception
	{
		String port = args[0];
		String slot = args[1];
		String offsets = args[2];
		String eventsFile = args[3];
		int expected = Integer.parseInt(args[4]);
		int timeout = Integer.parseInt(args[5]);
		String snapshotMode = args[6];

		Properties p = new Properties();
		p.setProperty("name", "cx-" + slot);
		p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
		p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
		p.setProperty("offset.storage.file.filename", offsets);
		p.setProperty("offset.flush.interval.ms", "0");
		p.setProperty("database.hostname", "127.0.0.1");
		p.setProperty("database.port", port);
		p.setProperty("database.user", "postgres");
		p.setProperty("database.password", "unused");
		p.setProperty("database.dbname", "postgres");
		p.setProperty("topic.prefix", "cx");
		// the documented set-up: pgoutput (the shadow plugin on the server),
		// a publication made by the DBA, a slot Debezium makes (or finds)
		p.setProperty("plugin.name", "pgoutput");
		p.setProperty("slot.name", slot);
		p.setProperty("publication.name", "dbz_pub");
		p.setProperty("publication.autocreate.mode", "disabled");
		// the published tables only: Debezium's snapshot reads every table it
		// may see, compressx's own (column_settings, dictionaries) included
		p.setProperty("table.include.list", "public.h,public.c,public.hf,public.cf");
		p.setProperty("snapshot.mode", snapshotMode);
		p.setProperty("converter.schemas.enable", "false");
		p.setProperty("key.converter.schemas.enable", "false");
		p.setProperty("value.converter.schemas.enable", "false");
		// fail at once instead of retrying (the stuck case is looked at);
		// -Dcx.retries=default leaves Debezium's own setting
		String retries = System.getProperty("cx.retries", "0");
		if (!retries.equals("default"))
			p.setProperty("errors.max.retries", retries);

		AtomicInteger count = new AtomicInteger();
		CountDownLatch done = new CountDownLatch(1);
		String[] end = new String[1];
		java.io.File stopFile = new java.io.File(eventsFile + ".stop");
		p.setProperty("tombstones.on.delete", "false");
		try (PrintWriter out = new PrintWriter(new OutputStreamWriter(
				new FileOutputStream(eventsFile, true), StandardCharsets.UTF_8)))
		{
			DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
					.using(p)
					.notifying((records, committer) -> {
						for (ChangeEvent<String, String> r : records)
						{
							synchronized (out)
							{
								out.println(r.destination() + "\t" + r.value());
								out.flush();
							}
							committer.markProcessed(r);
							if (r.value() != null && count.incrementAndGet() >= expected)
								done.countDown();
						}
						committer.markBatchFinished();
					})
					.using((success, message, error) -> {
						if (end[0] == null)
							end[0] = "STOPPED BY ITSELF success=" + success + " message=" + message
								+ (error != null ? " cause=" + rootCause(error) : "");
						done.countDown();
					})
					.build();
			ExecutorService executor = Executors.newSingleThreadExecutor();
			executor.execute(engine);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeout);
			boolean finished = false;
			while (!finished && System.nanoTime() < deadline)
				finished = done.await(200, TimeUnit.MILLISECONDS) || stopFile.exists();
			String stoppedByItself = end[0];
			end[0] = stoppedByItself != null ? stoppedByItself : "STOPPED by the check";
			try
			{
				engine.close();
			}
			catch (IllegalStateException alreadyStopped)
			{
				/* it stopped by itself */
			}
			executor.shutdownNow();
			executor.awaitTermination(60, TimeUnit.SECONDS);
			System.out.println("EVENTS " + count.get());
			if (!finished)
				System.out.println("TIMEOUT after " + timeout + " s");
			System.out.println(end[0]);
		}
		System.exit(0);
	}

	/* the server's message, from the end of the chain of causes */
	private static String rootCause(Throwable error)
	{
		Throwable t = error;
		while (t.getCause() != null && t.getCause() != t)
			t = t.getCause();
		return t.toString().replace('\n', ' ');
	}
}
