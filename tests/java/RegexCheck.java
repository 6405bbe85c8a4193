// Compiles each line of a file (hex UTF-8, one pattern per line) with java.util.regex.Pattern,
// as Trino does with every pattern of an access-rules file. Run: java RegexCheck.java FILE
// Prints one line per pattern, in order: "OK", or "ERROR<TAB>index<TAB>description" with the
// index and description (hex UTF-8: it may hold any character) of Java's PatternSyntaxException
// ("ERROR<TAB>-1<TAB>..." for any other exception Pattern.compile throws, such as a
// StackOverflowError on deep nesting).
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
                out.append("ERROR\t").append(e.getIndex()).append('\t')
                   .append(hex.formatHex(e.getDescription().getBytes(StandardCharsets.UTF_8)))
                   .append('\n');
            } catch (RuntimeException | StackOverflowError e) {
                out.append("ERROR\t-1\t")
                   .append(hex.formatHex(e.getClass().getSimpleName().getBytes(StandardCharsets.UTF_8)))
                   .append('\n');
            }
        }
        System.out.print(out);
    }
}
