//! The header against the library: every function the library exports with C linkage is
//! declared with the same types, every struct has the same fields in the same order, and
//! every constant the same value, and the header declares nothing else. (The layouts are
//! checked by compiling the header with `cc`: `tests/hosts.rs`.)

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

const HEADER: &str = include_str!("../include/responses_mcp.h");
const LIB: &str = include_str!("../src/lib.rs");
const ABI: &str = include_str!("../src/abi.rs");

/// Removes C comments.
fn uncommented(c: &str) -> String {
    let mut out = String::new();
    let mut rest = c;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    out.push_str(rest);
    out
}

/// A C type in one spelling: single spaces, none before or after `*`.
fn c_type(t: &str) -> String {
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    t.replace(" *", "*").replace("* ", "*")
}

/// A C declaration `type name` split into its type and name.
fn c_decl(decl: &str) -> (String, String) {
    let decl = decl.trim();
    let at = decl
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    (c_type(&decl[..at]), decl[at..].to_owned())
}

/// The C spelling of a Rust type of the ABI.
fn rust_to_c(t: &str) -> String {
    let t = t.trim();
    if let Some(inner) = t.strip_prefix("*const ") {
        let inner = rust_to_c(inner);
        return match inner.strip_suffix('*') {
            // `*const *const u8` is `const uint8_t **`: the const binds to the pointee.
            Some(_) => format!("{inner}*"),
            None => format!("const {inner}*"),
        };
    }
    if let Some(inner) = t.strip_prefix("*mut ") {
        return format!("{}*", rust_to_c(inner));
    }
    match t {
        "" | "()" => "void",
        "u8" => "uint8_t",
        "u32" => "uint32_t",
        "i32" => "int32_t",
        "u64" => "uint64_t",
        "usize" => "size_t",
        "OrmEngine" => "orm_engine",
        "OrmInput" => "orm_input",
        "OrmAction" => "orm_action",
        other => panic!("no C spelling for Rust type {other}: add it here and to the header"),
    }
    .to_owned()
}

/// `name -> (return type, parameter types)` of the header's prototypes.
fn header_functions() -> BTreeMap<String, (String, Vec<String>)> {
    let text = uncommented(HEADER);
    let mut functions = BTreeMap::new();
    for statement in text.split(';') {
        // The preprocessor's lines and C++'s `extern "C" {` carry no `;` of their own.
        let statement = statement
            .lines()
            .filter(|l| {
                let l = l.trim();
                !l.starts_with('#') && !l.starts_with("extern \"C\"") && l != "}"
            })
            .collect::<Vec<_>>()
            .join(" ");
        if statement.contains("typedef") {
            continue;
        }
        let Some((head, params)) = statement.split_once('(') else {
            continue;
        };
        let (ret, name) = c_decl(head);
        let params = params.trim_end().trim_end_matches(')');
        let params = if params.trim() == "void" {
            Vec::new()
        } else {
            params.split(',').map(|p| c_decl(p).0).collect()
        };
        functions.insert(name, (ret, params));
    }
    functions
}

/// The same of the library's `extern "C"` functions.
fn library_functions() -> BTreeMap<String, (String, Vec<String>)> {
    let mut functions = BTreeMap::new();
    for piece in LIB.split("extern \"C\" fn ").skip(1) {
        let (name, rest) = piece.split_once('(').unwrap();
        let (params, rest) = rest.split_once(')').unwrap();
        let signature_end = rest.find('{').unwrap();
        let ret = rest[..signature_end].trim().trim_start_matches("->");
        let params = params
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| rust_to_c(p.split_once(':').unwrap().1))
            .collect();
        functions.insert(name.to_owned(), (rust_to_c(ret), params));
    }
    // Every one of them must be exported.
    let exported = LIB.matches("#[no_mangle]\npub").count();
    assert_eq!(
        exported,
        functions.len(),
        "each extern \"C\" fn is #[no_mangle]"
    );
    functions
}

#[test]
fn the_header_declares_exactly_the_exported_functions() {
    let header = header_functions();
    let library = library_functions();
    assert!(library.len() >= 8, "{library:?}");
    assert_eq!(header, library);
}

/// `name -> value` of the header's `#define ORM_*` and the library's `pub const ORM_*`.
#[test]
fn the_headers_constants_are_the_librarys() {
    let header: BTreeMap<String, i64> = HEADER
        .lines()
        .filter_map(|l| l.strip_prefix("#define ORM_"))
        .map(|l| {
            let (name, value) = l.split_once(' ').unwrap();
            (format!("ORM_{name}"), value.trim().parse().unwrap())
        })
        .collect();
    let library: BTreeMap<String, i64> = ABI
        .lines()
        .filter_map(|l| l.strip_prefix("pub const ORM_"))
        .map(|l| {
            let (name, rest) = l.split_once(':').unwrap();
            let value = rest.split_once('=').unwrap().1.trim().trim_end_matches(';');
            (format!("ORM_{name}"), value.parse().unwrap())
        })
        .collect();
    assert!(library.len() > 30, "{library:?}");
    assert_eq!(header, library);
    // And the values the library was compiled with are those of its source.
    assert_eq!(
        library["ORM_ABI_VERSION"],
        i64::from(responses_mcp_ffi::orm_abi_version())
    );
    assert_eq!(
        library["ORM_ERR_PANIC"],
        i64::from(responses_mcp_ffi::ORM_ERR_PANIC)
    );
}

fn header_struct(name: &str) -> Vec<(String, String)> {
    let text = uncommented(HEADER);
    let start = text.find(&format!("typedef struct {name} {{")).unwrap();
    let body = &text[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    body.split(';')
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let (t, n) = c_decl(f);
            (n, t)
        })
        .collect()
}

fn library_struct(name: &str) -> Vec<(String, String)> {
    let start = ABI.find(&format!("pub struct {name} {{")).unwrap();
    let body = &ABI[start..];
    let body = &body[..body.find("\n}").unwrap()];
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("pub "))
        .filter_map(|l| l.split_once(':'))
        .map(|(n, t)| (n.to_owned(), rust_to_c(t.trim_end_matches(','))))
        .collect()
}

#[test]
fn the_headers_structs_are_the_librarys() {
    for (c, rust) in [("orm_input", "OrmInput"), ("orm_action", "OrmAction")] {
        let header = header_struct(c);
        assert!(header.len() >= 8, "{header:?}");
        assert_eq!(header, library_struct(rust), "{c}");
    }
}
