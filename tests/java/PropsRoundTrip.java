// Reads properties files with the real java.util.Properties, as Trino (airlift) does:
// Properties.load(Reader) over a UTF-8 reader. Run: java PropsRoundTrip.java FILE...
// Prints "FILE <index>" and then one "<hex utf-8 key> <hex utf-8 value>" line per entry, sorted.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.io.Reader;
import java.util.HexFormat;
import java.util.Properties;
import java.util.TreeMap;

public class PropsRoundTrip {
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < args.length; i++) {
            Properties props = new Properties();
            try (Reader reader = Files.newBufferedReader(Path.of(args[i]), StandardCharsets.UTF_8)) {
                props.load(reader);
            }
            out.append("FILE ").append(i).append('\n');
            TreeMap<String, String> sorted = new TreeMap<>();
            for (String name : props.stringPropertyNames()) {
                sorted.put(name, props.getProperty(name));
            }
            for (var e : sorted.entrySet()) {
                out.append(hex.formatHex(e.getKey().getBytes(StandardCharsets.UTF_8))).append(' ')
                   .append(hex.formatHex(e.getValue().getBytes(StandardCharsets.UTF_8))).append('\n');
            }
        }
        System.out.print(out);
    }
}
