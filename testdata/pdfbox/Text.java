// Text prints the text PDFBox's PDFTextStripper extracts from a PDF, as
// Apache Tika (behind Solr, Elasticsearch's ingest and DSpace) reads it:
// each page's text, ended by a form feed. With --sort the stripper sorts
// the text by position (setSortByPosition(true), as Tika can be told to);
// without it, it keeps the content stream's order (Tika's default).
// Usage: java -cp pdfbox2.jar:fontbox2.jar:commons-logging.jar Text.java [--sort] FILE.pdf
import java.io.File;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.text.PDFTextStripper;

public class Text {
    public static void main(String[] args) throws Exception {
        boolean sort = args.length == 2 && args[0].equals("--sort");
        if (args.length != (sort ? 2 : 1)) {
            System.err.println("usage: Text [--sort] FILE.pdf");
            System.exit(2);
        }
        Writer out = new OutputStreamWriter(System.out, StandardCharsets.UTF_8);
        try (PDDocument doc = PDDocument.load(new File(args[args.length - 1]))) {
            PDFTextStripper s = new PDFTextStripper();
            s.setSortByPosition(sort);
            s.setLineSeparator("\n");
            for (int i = 1; i <= doc.getNumberOfPages(); i++) {
                s.setStartPage(i);
                s.setEndPage(i);
                out.write(s.getText(doc));
                out.write("\f");
            }
        }
        out.flush();
    }
}
