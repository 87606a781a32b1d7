/*
 * Lists every ConfigOption declared as a static field in the given Flink jars.
 *
 * Usage: java OptionExtractor.java OUT.jsonl JAR...
 *
 * All jars share one class loader (the first jar wins for duplicate classes, so pass
 * lib/flink-dist*.jar first). Each class file is scanned for the ConfigOption type
 * descriptor before it is loaded, so only the few hundred classes that can declare an
 * option are loaded and initialised. Everything is read reflectively, by name, because the
 * ConfigOption API differs slightly between Flink 1.13 and 2.x. One JSON object per field
 * and line; failures per class are written as {"error": ...} lines, never fatal.
 */

import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

public class OptionExtractor {

    private static final String OPTION_CLASS = "org.apache.flink.configuration.ConfigOption";
    private static final byte[] DESCRIPTOR =
            "Lorg/apache/flink/configuration/ConfigOption;".getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: OptionExtractor OUT.jsonl JAR...");
            System.exit(2);
        }
        URL[] urls = new URL[args.length - 1];
        for (int i = 1; i < args.length; i++) {
            urls[i - 1] = new File(args[i]).toURI().toURL();
        }
        // Parent is the platform loader so nothing of this program leaks into Flink's view.
        URLClassLoader loader = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader());
        Class<?> optionClass = loader.loadClass(OPTION_CLASS);

        Set<String> seenClasses = new LinkedHashSet<>();
        int options = 0;
        int errors = 0;
        try (BufferedWriter out = Files.newBufferedWriter(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            for (int i = 1; i < args.length; i++) {
                String jarName = new File(args[i]).getName();
                for (String className : candidateClasses(args[i])) {
                    if (!seenClasses.add(className)) {
                        continue;
                    }
                    try {
                        Class<?> cls = Class.forName(className, false, loader);
                        // Scala objects keep their vals as instance fields of the MODULE$ singleton.
                        Object scalaModule = null;
                        for (Field field : cls.getDeclaredFields()) {
                            if (field.getName().equals("MODULE$") && Modifier.isStatic(field.getModifiers())) {
                                field.setAccessible(true);
                                scalaModule = field.get(null);
                            }
                        }
                        for (Field field : cls.getDeclaredFields()) {
                            boolean isStatic = Modifier.isStatic(field.getModifiers());
                            if (field.getType() != optionClass || (!isStatic && scalaModule == null)) {
                                continue;
                            }
                            try {
                                field.setAccessible(true);
                                Object option = field.get(isStatic ? null : scalaModule);
                                if (option == null) {
                                    continue;
                                }
                                out.write(describe(option, optionClass, field, cls, jarName));
                                out.write('\n');
                                options++;
                            } catch (Throwable t) {
                                errors++;
                                out.write(error(jarName, className + "#" + field.getName(), t));
                                out.write('\n');
                            }
                        }
                    } catch (Throwable t) {
                        errors++;
                        out.write(error(jarName, className, t));
                        out.write('\n');
                    }
                }
            }
        }
        System.err.println("options=" + options + " errors=" + errors + " classes=" + seenClasses.size());
        // Some option classes start non-daemon threads in static initialisers.
        System.exit(0);
    }

    /** Class names whose bytecode mentions the ConfigOption field descriptor. */
    private static List<String> candidateClasses(String jarPath) throws Exception {
        List<String> names = new ArrayList<>();
        try (JarFile jar = new JarFile(jarPath)) {
            Enumeration<JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                JarEntry entry = entries.nextElement();
                String name = entry.getName();
                if (!name.endsWith(".class") || name.startsWith("META-INF/") || name.contains("-")) {
                    continue;
                }
                byte[] bytes;
                try (InputStream in = jar.getInputStream(entry)) {
                    bytes = readAll(in);
                }
                if (contains(bytes, DESCRIPTOR)) {
                    names.add(name.substring(0, name.length() - ".class".length()).replace('/', '.'));
                }
            }
        }
        return names;
    }

    private static byte[] readAll(InputStream in) throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        byte[] chunk = new byte[65536];
        int n;
        while ((n = in.read(chunk)) > 0) {
            buffer.write(chunk, 0, n);
        }
        return buffer.toByteArray();
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static String describe(Object option, Class<?> optionClass, Field field, Class<?> owner,
                                   String jarName) throws Exception {
        StringBuilder json = new StringBuilder(256);
        json.append('{');
        put(json, "key", call(option, "key"));
        json.append(',');
        put(json, "class", owner.getName());
        json.append(',');
        put(json, "field", field.getName());
        json.append(',');
        put(json, "jar", jarName);

        Class<?> clazz = (Class<?>) privateField(option, optionClass, "clazz");
        Object isList = privateField(option, optionClass, "isList");
        json.append(",\"clazz\":").append(clazz == null ? "null" : quote(clazz.getName()));
        json.append(",\"list\":").append(Boolean.TRUE.equals(isList));
        if (clazz != null && clazz.isEnum()) {
            json.append(",\"enum\":[");
            Object[] constants = clazz.getEnumConstants();
            for (int i = 0; i < constants.length; i++) {
                if (i > 0) {
                    json.append(',');
                }
                json.append(quote(((Enum<?>) constants[i]).name()));
            }
            json.append(']');
        }

        boolean hasDefault = (Boolean) call(option, "hasDefaultValue");
        json.append(",\"default\":").append(hasDefault ? value(call(option, "defaultValue")) : "null");

        json.append(",\"fallback\":[");
        Object fallbacks = call(option, "fallbackKeys");
        boolean first = true;
        for (Object fallback : (Iterable<?>) fallbacks) {
            if (!first) {
                json.append(',');
            }
            first = false;
            json.append('[').append(quote((String) call(fallback, "getKey"))).append(',')
                    .append(call(fallback, "isDeprecated")).append(']');
        }
        json.append(']');

        json.append(",\"deprecated\":").append(field.isAnnotationPresent(Deprecated.class));
        json.append(",\"class_deprecated\":").append(owner.isAnnotationPresent(Deprecated.class));
        json.append(",\"public\":").append(Modifier.isPublic(field.getModifiers()));
        json.append(",\"annotations\":[");
        first = true;
        for (Annotation annotation : field.getAnnotations()) {
            String type = annotation.annotationType().getName();
            if (type.equals("java.lang.Deprecated")) {
                continue;
            }
            if (!first) {
                json.append(',');
            }
            first = false;
            json.append(quote(annotation.toString()));
        }
        json.append("]}");
        return json.toString();
    }

    /** A default value as JSON; MemorySize/Duration are tagged so the driver can normalise them. */
    private static String value(Object v) throws Exception {
        if (v == null) {
            return "null";
        }
        if (v instanceof Duration) {
            Duration d = (Duration) v;
            return "{\"duration_s\":" + d.getSeconds() + ",\"nano\":" + d.getNano() + "}";
        }
        String cls = v.getClass().getName();
        if (cls.equals("org.apache.flink.configuration.MemorySize")) {
            return "{\"bytes\":" + call(v, "getBytes") + "}";
        }
        if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
            return v.toString();
        }
        if (v instanceof Float || v instanceof Double) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                return quote(v.toString());
            }
            // Float.toString keeps 0.1f as "0.1" (a widened double would print 0.10000000149...).
            return "{\"float\":" + quote(v.toString()) + "}";
        }
        if (v instanceof Enum) {
            return quote(((Enum<?>) v).name());
        }
        if (v instanceof List) {
            StringBuilder list = new StringBuilder("[");
            boolean first = true;
            for (Object item : (List<?>) v) {
                if (!first) {
                    list.append(',');
                }
                first = false;
                list.append(value(item));
            }
            return list.append(']').toString();
        }
        if (v instanceof Map) {
            StringBuilder map = new StringBuilder("{\"map\":{");
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) {
                    map.append(',');
                }
                first = false;
                map.append(quote(String.valueOf(e.getKey()))).append(':').append(quote(String.valueOf(e.getValue())));
            }
            return map.append("}}").toString();
        }
        if (v instanceof Class) {
            return quote(((Class<?>) v).getName());
        }
        return quote(v.toString());
    }

    private static Object call(Object target, String method) throws Exception {
        Method m = findMethod(target.getClass(), method);
        m.setAccessible(true);
        return m.invoke(target);
    }

    private static Method findMethod(Class<?> cls, String name) throws NoSuchMethodException {
        for (Class<?> c = cls; c != null; c = c.getSuperclass()) {
            try {
                return c.getDeclaredMethod(name);
            } catch (NoSuchMethodException ignored) {
                // look further up
            }
        }
        throw new NoSuchMethodException(cls.getName() + "." + name);
    }

    private static Object privateField(Object target, Class<?> cls, String name) {
        try {
            Field f = cls.getDeclaredField(name);
            f.setAccessible(true);
            return f.get(target);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static String error(String jar, String where, Throwable t) {
        return "{\"error\":" + quote(jar + " " + where + ": " + t) + "}";
    }

    private static void put(StringBuilder json, String name, Object v) {
        json.append(quote(name)).append(':').append(v == null ? "null" : quote(v.toString()));
    }

    private static String quote(String s) {
        StringBuilder q = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': q.append("\\\""); break;
                case '\\': q.append("\\\\"); break;
                case '\n': q.append("\\n"); break;
                case '\r': q.append("\\r"); break;
                case '\t': q.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        q.append(String.format("\\u%04x", (int) c));
                    } else {
                        q.append(c);
                    }
            }
        }
        return q.append('"').toString();
    }
}
