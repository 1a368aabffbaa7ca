//! The `clients_file` fuzz target.

use responses_mcp_config::clients::parse;

/// Any text as a clients file: a list of clients or an error that names no digest, never
/// a panic. What is accepted is consistent: one digest per client, names that are short
/// labels and not `default`, no two clients with one name or one token.
pub fn clients_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match parse(&text) {
        Ok(named) => {
            let clients: Vec<_> = named.clients.iter().collect();
            assert_eq!(clients.len(), named.tokens.digests.len());
            assert!(!clients.is_empty());
            for (i, (id, client)) in clients.iter().enumerate() {
                assert_eq!(named.tokens.digests[i].0, *id);
                assert_eq!(named.clients.name(*id), client.name);
                assert!((1..=64).contains(&client.name.len()));
                assert_ne!(client.name, "default");
                assert!(client
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)));
                assert!(clients[..i].iter().all(|(_, c)| c.name != client.name));
                let digest = named.tokens.digests[i].1;
                assert!(named.tokens.digests[..i].iter().all(|(_, d)| *d != digest));
                assert_ne!(client.limit.calls_per_minute, Some(0));
            }
        }
        Err(e) => {
            let e = e.0;
            assert!(!e.is_empty());
            // A 64-hex-digit run in the input (a digest) is never repeated.
            for word in text.split(|c: char| !c.is_ascii_hexdigit()) {
                if word.len() == 64 {
                    assert!(!e.contains(word), "the error repeats a digest: {e}");
                }
            }
        }
    }
}
