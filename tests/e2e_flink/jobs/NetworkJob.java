package flinktune.e2e;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

/**
 * flinktune's end-to-end test job: Source: Gen -REBALANCE-> Parse -HASH-> KeyedAgg -REBALANCE->
 * SinkWork -> Discard: Writer. Every edge is a network shuffle, so with 2 TaskManagers each gate has
 * local and remote (Netty, credit-based) channels. The bottleneck is a fixed per-record pause
 * (not CPU work: the test machines have two cores), so where backpressure starts is known.
 *
 * With --exchanges 1 the job has one all-to-all exchange only (the worst case the lint assumes):
 * Source: Gen -> Parse -HASH-> KeyedAgg -> SinkWork -> Discard: Writer.
 *
 * Arguments: --name NAME --rate RECORDS_PER_S --sink-pause-us N --agg-pause-us N --hot-fraction F
 *            --exchanges 3|1 --checkpoint-ms N (aligned checkpoints every N ms; 0: none)
 *            --payload-bytes N (each record's string payload; 96 by default)
 *            --agg-parallelism N, --sink-parallelism N (set in the job, as users do: the job's default
 *            parallelism does not reach them; 0, the default, leaves them at the job's parallelism)
 */
public class NetworkJob {

    /** Long -> (key, payload); with hotFraction > 0 that share of records goes to key 0 (skew). */
    public static final class Parse implements MapFunction<Long, Tuple2<Integer, String>> {
        private final double hotFraction;
        private final String payload;

        Parse(double hotFraction, int payloadBytes) {
            this.hotFraction = hotFraction;
            this.payload = "x".repeat(payloadBytes);
        }

        @Override
        public Tuple2<Integer, String> map(Long i) {
            boolean hot = (i % 1000) < (long) (hotFraction * 1000);
            int key = hot ? 0 : 1 + (int) (i % 997);
            return Tuple2.of(key, payload);
        }
    }

    /** Counts per key (real keyed state) and pauses per record when asked to. */
    public static final class KeyedAgg
            extends KeyedProcessFunction<Integer, Tuple2<Integer, String>, Tuple2<Integer, String>> {
        private final long pauseMicros;
        private transient ValueState<Long> count;

        KeyedAgg(long pauseMicros) {
            this.pauseMicros = pauseMicros;
        }

        // open(OpenContext) exists from 1.19 (FLIP-344); 2.x removed open(Configuration).
        @Override
        public void open(OpenContext openContext) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(
                Tuple2<Integer, String> value, Context ctx, Collector<Tuple2<Integer, String>> out)
                throws Exception {
            Long c = count.value();
            count.update(c == null ? 1L : c + 1);
            pause(pauseMicros);
            out.collect(value);
        }
    }

    /** The sink side's work: a fixed pause per record makes it the bottleneck when asked to. */
    public static final class SinkWork implements MapFunction<Tuple2<Integer, String>, Integer> {
        private final long pauseMicros;

        SinkWork(long pauseMicros) {
            this.pauseMicros = pauseMicros;
        }

        @Override
        public Integer map(Tuple2<Integer, String> value) {
            pause(pauseMicros);
            return value.f1.length();
        }
    }

    /**
     * At least {@code micros} of pause. One parkNanos is not enough: it returns early whenever another
     * thread unparks the task thread (Flink's input availability notifications do), which made the
     * "slow" operator faster the more often data arrived (a 1 ms pause let 3,000 records/s through).
     */
    static void pause(long micros) {
        long deadline = System.nanoTime() + micros * 1000L;
        for (long left = micros * 1000L; left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> params = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            params.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        return params;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> params = parse(args);
        String name = params.getOrDefault("name", "flinktune-e2e");
        double rate = Double.parseDouble(params.getOrDefault("rate", "500"));
        long sinkPause = Long.parseLong(params.getOrDefault("sink-pause-us", "0"));
        long aggPause = Long.parseLong(params.getOrDefault("agg-pause-us", "0"));
        double hotFraction = Double.parseDouble(params.getOrDefault("hot-fraction", "0"));
        boolean oneExchange = params.getOrDefault("exchanges", "3").equals("1");
        int payloadBytes = Integer.parseInt(params.getOrDefault("payload-bytes", "96"));
        int aggParallelism = Integer.parseInt(params.getOrDefault("agg-parallelism", "0"));
        int sinkParallelism = Integer.parseInt(params.getOrDefault("sink-parallelism", "0"));

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        long checkpointMs = Long.parseLong(params.getOrDefault("checkpoint-ms", "0"));
        if (checkpointMs > 0) {
            env.enableCheckpointing(checkpointMs);   // aligned, exactly-once (the default mode)
        }
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(i -> i, Long.MAX_VALUE, RateLimiterStrategy.perSecond(rate), Types.LONG);
        DataStream<Long> generated = env.fromSource(source, WatermarkStrategy.noWatermarks(), "Gen");
        SingleOutputStreamOperator<Tuple2<Integer, String>> aggregated = (oneExchange ? generated : generated.rebalance())
                .map(new Parse(hotFraction, payloadBytes))
                .returns(Types.TUPLE(Types.INT, Types.STRING))
                .name("Parse")
                .keyBy(t -> t.f0, Types.INT)
                .process(new KeyedAgg(aggPause))
                .returns(Types.TUPLE(Types.INT, Types.STRING))
                .name("KeyedAgg");
        if (aggParallelism > 0) {
            aggregated.setParallelism(aggParallelism);
        }
        SingleOutputStreamOperator<Integer> work = (oneExchange ? aggregated : aggregated.rebalance())
                .map(new SinkWork(sinkPause))
                .name("SinkWork");
        DataStreamSink<Integer> sink = work.sinkTo(new DiscardingSink<>()).name("Discard");
        if (sinkParallelism > 0) {
            // Both, so that SinkWork and the sink stay one chained vertex.
            work.setParallelism(sinkParallelism);
            sink.setParallelism(sinkParallelism);
        }
        env.execute(name);
    }
}
