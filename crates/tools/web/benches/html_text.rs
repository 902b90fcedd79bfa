//! Speed of the HTML work of the web tools: readable text of a large page (`fetch_page` reads at
//! most 5 MiB) and parsing a DuckDuckGo results page.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use elroy_tools_web::html_text::html_to_text;
use elroy_tools_web::parse_results;

fn main() {
    divan::main();
}

/// A page of `sections` article sections with navigation, scripts, lists and a table each.
fn page(sections: usize) -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html><head><title>Bench</title><script>var a = 1;</script></head><body><nav><a href='/'>Home</a></nav><main>",
    );
    for i in 0..sections {
        html.push_str(&format!(
            "<section><h2>Section {i}</h2><p>Some <b>bold</b> and <a href='#'>linked</a> text,   with   spaces.</p>\
             <ul><li>one</li><li>two<ol><li>nested</li></ol></li></ul>\
             <table><tr><th>k</th><th>v</th></tr><tr><td>{i}</td><td>x</td></tr></table>\
             <script>ignored({i});</script><pre>  code {i}\n  more</pre></section>"
        ));
    }
    html.push_str("</main><footer>f</footer></body></html>");
    html
}

#[divan::bench(args = [100, 1000, 10000])]
fn readable_text(bencher: divan::Bencher, sections: usize) {
    let html = page(sections);
    bencher
        .counter(divan::counter::BytesCount::new(html.len()))
        .bench(|| html_to_text(divan::black_box(&html)));
}

#[divan::bench]
fn duckduckgo_results(bencher: divan::Bencher) {
    let html = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/duckduckgo_rust.html"),
    )
    .unwrap();
    let base = reqwest::Url::parse("https://html.duckduckgo.com/html/").unwrap();
    bencher.bench(|| parse_results(divan::black_box(&html), &base));
}
