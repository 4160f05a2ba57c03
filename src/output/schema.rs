//! What an output table is declared as: its columns ([`ColumnDef`]: name,
//! [`Kind`], doc), and the schema as `tagger schema` prints it. Below both
//! the records that fill tables ([`super::record`]) and the Parquet writer
//! ([`super::parquet`]).

/// The type of a declared column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 string.
    Str,
    /// Unsigned 64-bit integer.
    U64,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// 64-bit float.
    F64,
    /// Boolean.
    Bool,
}

/// One column of an output table: name, type, and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    /// The column's name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// What it holds (the field's doc comment).
    pub doc: &'static str,
}

impl ColumnDef {
    /// A column with its doc (for the hand-written sweep-level columns).
    pub const fn new(name: &'static str, kind: Kind, doc: &'static str) -> Self {
        ColumnDef { name, kind, doc }
    }

    /// The doc text as one line, without the leading spaces that doc
    /// comments carry.
    pub fn doc_line(&self) -> String {
        self.doc.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// The type's name in `tagger schema`.
pub(crate) fn type_name(k: Kind) -> &'static str {
    match k {
        Kind::Str => "string",
        Kind::U64 => "u64",
        Kind::U32 => "u32",
        Kind::I64 => "i64",
        Kind::F64 => "f64",
        Kind::Bool => "bool",
    }
}

/// Tables as Markdown: a heading and a column table each.
pub fn markdown(tables: &[(&str, Vec<ColumnDef>)]) -> String {
    let mut out = String::new();
    for (i, (name, cols)) in tables.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "#### `{name}`\n\n| column | type | holds |\n|---|---|---|\n"
        ));
        for c in cols {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                c.name,
                type_name(c.kind),
                c.doc_line().replace('|', "\\|")
            ));
        }
    }
    out
}

/// Tables as JSON: `{table: [{name, type, doc}, ...]}`, tables in order.
pub fn json(tables: &[(&str, Vec<ColumnDef>)]) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for (name, cols) in tables {
        let cols: Vec<_> = cols
            .iter()
            .map(|c| serde_json::json!({"name": c.name, "type": type_name(c.kind), "doc": c.doc_line()}))
            .collect();
        map.insert((*name).to_string(), serde_json::Value::Array(cols));
    }
    serde_json::Value::Object(map)
}
