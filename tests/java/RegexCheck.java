// Compiles each line of a file (hex UTF-8, one pattern per line) with java.util.regex.Pattern,
// as Trino does with every pattern of an access-rules file. Run: java RegexCheck.java FILE
// Prints "OK" or "ERROR" per line, in order.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

public class RegexCheck {
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
            String pattern = new String(hex.parseHex(line), StandardCharsets.UTF_8);
            try {
                Pattern.compile(pattern);
                out.append("OK\n");
            } catch (PatternSyntaxException e) {
                out.append("ERROR\n");
            }
        }
        System.out.print(out);
    }
}
