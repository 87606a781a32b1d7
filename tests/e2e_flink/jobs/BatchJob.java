package flinktune.e2e;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.functions.RichReduceFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * flinktune's end-to-end BATCH job (issue 19): Source: Gen -> Parse -HASH-> Reduce -REBALANCE->
 * Sink, in RuntimeExecutionMode.BATCH, so both exchanges are blocking (sort-merge or hash shuffle)
 * and the job runs as three pipelined regions one after another.
 *
 * Arguments: --records N --parallelism P (set on every operator, so the adaptive batch scheduler
 * keeps it) --adaptive true (only the source gets P: the scheduler decides the rest, and the REST
 * plan shows parallelism -1 for them until it has) --hold-ms H (every task waits H ms in open(),
 * after its buffers are set up: the tasks of a stage then overlap as they do with real data volumes,
 * instead of a small stage's first tasks finishing, and giving their buffers back, before the last
 * ones deploy).
 */
public class BatchJob {

    private static final String PAYLOAD = "y".repeat(96);

    private static void hold(long millis) throws InterruptedException {
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    public static final class Parse extends RichMapFunction<Long, Tuple2<Integer, String>> {
        private final long holdMs;

        Parse(long holdMs) {
            this.holdMs = holdMs;
        }

        @Override
        public void open(OpenContext context) throws Exception {
            hold(holdMs);
        }

        @Override
        public Tuple2<Integer, String> map(Long i) {
            return Tuple2.of((int) (i % 4099), PAYLOAD);
        }
    }

    public static final class Keep extends RichReduceFunction<Tuple2<Integer, String>> {
        private final long holdMs;

        Keep(long holdMs) {
            this.holdMs = holdMs;
        }

        @Override
        public void open(OpenContext context) throws Exception {
            hold(holdMs);
        }

        @Override
        public Tuple2<Integer, String> reduce(Tuple2<Integer, String> a, Tuple2<Integer, String> b) {
            return Tuple2.of(a.f0, a.f1.length() >= b.f1.length() ? a.f1 : b.f1);
        }
    }

    /** Chained before the sink, so the sink's task holds too. */
    public static final class Hold extends RichMapFunction<Tuple2<Integer, String>, Tuple2<Integer, String>> {
        private final long holdMs;

        Hold(long holdMs) {
            this.holdMs = holdMs;
        }

        @Override
        public void open(OpenContext context) throws Exception {
            hold(holdMs);
        }

        @Override
        public Tuple2<Integer, String> map(Tuple2<Integer, String> t) {
            return t;
        }
    }

    private static String arg(String[] args, String name, String fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--" + name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    public static void main(String[] args) throws Exception {
        long records = Long.parseLong(arg(args, "records", "200000"));
        int parallelism = Integer.parseInt(arg(args, "parallelism", "4"));
        boolean adaptive = Boolean.parseBoolean(arg(args, "adaptive", "false"));
        long holdMs = Long.parseLong(arg(args, "hold-ms", "0"));

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);

        DataGeneratorSource<Long> source = new DataGeneratorSource<>(i -> i, records, Types.LONG);
        SingleOutputStreamOperator<Tuple2<Integer, String>> parsed = env
                .fromSource(source, WatermarkStrategy.noWatermarks(), "Gen")
                .setParallelism(parallelism)
                .map(new Parse(holdMs))
                .name("Parse")
                .setParallelism(parallelism);
        SingleOutputStreamOperator<Tuple2<Integer, String>> reduced =
                parsed.keyBy(t -> t.f0).reduce(new Keep(holdMs)).name("Reduce");
        SingleOutputStreamOperator<Tuple2<Integer, String>> held =
                reduced.rebalance().map(new Hold(holdMs)).name("Hold");
        var sink = held.sinkTo(new DiscardingSink<>()).name("Sink");
        if (!adaptive) {
            reduced.setParallelism(parallelism);
            held.setParallelism(parallelism);
            sink.setParallelism(parallelism);
        }
        env.execute("flinktune-batch-" + parallelism + (adaptive ? "-adaptive" : ""));
    }
}
