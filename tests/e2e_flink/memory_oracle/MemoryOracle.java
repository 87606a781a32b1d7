package flinktune.e2e;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.util.ConfigurationParserUtils;

/**
 * Runs Flink's own start-up memory sizing for many configuration folders in one JVM.
 *
 * <p>Flink's bin/taskmanager.sh and bin/jobmanager.sh call {@code BashJavaUtils GET_TM_RESOURCE_PARAMS}
 * / {@code GET_JM_RESOURCE_PARAMS --configDir DIR} (bin/config.sh). {@code BashJavaUtils.main} prints
 * the result of its private {@code runCommand(Command, String[])} and exits; we call that same method
 * reflectively per folder so one JVM answers every configuration. Output, one line per folder and
 * command: {@code RESULT <tm|jm> <dir> OK <line>\t<line>} or {@code RESULT <tm|jm> <dir> ERR <chain>},
 * the chain being each cause's class and message joined by " || ".
 *
 * <p>BashJavaUtils does not look at the segment size; the TaskManager checks it right after start-up
 * ({@code TaskManagerServicesConfiguration.fromConfiguration} -> {@code ConfigurationParserUtils.getPageSize}),
 * so for the TaskManager we run that check too and report its refusal the same way.
 *
 * <p>Arguments: folder paths.
 */
public final class MemoryOracle {
    private MemoryOracle() {}

    public static void main(String[] args) throws Exception {
        Class<?> utils = Class.forName("org.apache.flink.runtime.util.bash.BashJavaUtils");
        @SuppressWarnings({"unchecked", "rawtypes"})
        Class<Enum> command = (Class<Enum>) Class.forName(
                "org.apache.flink.runtime.util.bash.BashJavaUtils$Command");
        Method run = utils.getDeclaredMethod("runCommand", command, String[].class);
        run.setAccessible(true);
        StringBuilder out = new StringBuilder();
        for (String dir : args) {
            for (String[] which : new String[][] {
                    {"tm", "GET_TM_RESOURCE_PARAMS"}, {"jm", "GET_JM_RESOURCE_PARAMS"}}) {
                @SuppressWarnings("unchecked")
                Object cmd = Enum.valueOf(command, which[1]);
                out.append("RESULT ").append(which[0]).append(' ').append(dir).append(' ');
                try {
                    @SuppressWarnings("unchecked")
                    List<String> lines = (List<String>) run.invoke(null, cmd,
                            new String[] {"--configDir", dir});
                    if (which[0].equals("tm")) {
                        Configuration conf = GlobalConfiguration.loadConfiguration(dir);
                        ConfigurationParserUtils.getPageSize(conf);
                    }
                    out.append("OK ").append(String.join("\t", lines));
                } catch (InvocationTargetException | RuntimeException e) {
                    out.append("ERR ");
                    Throwable t = e instanceof InvocationTargetException ? e.getCause() : e;
                    boolean first = true;
                    while (t != null) {
                        if (!first) {
                            out.append(" || ");
                        }
                        first = false;
                        String message = String.valueOf(t.getMessage()).replace('\n', ' ');
                        out.append(t.getClass().getName()).append(": ").append(message);
                        t = t.getCause() == t ? null : t.getCause();
                    }
                }
                out.append('\n');
            }
        }
        System.out.print(out);
        System.out.flush();
    }
}
