//! One definition per result record. A struct declared with `record!` is
//! at once its JSON form (serde, field names as keys) and its Parquet
//! columns (the same names, in field order, with a type derived from each
//! field's Rust type and the field's doc comment as the column's doc), so a
//! new figure is added in one place and reaches `tagger run --json`,
//! `runs.parquet`, `tagger schema` and the sweep checker together.

use super::parquet::{Kind, Table};

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
fn type_name(k: Kind) -> &'static str {
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

/// A Rust type that fills one column (nullable: `None` is a null).
pub(crate) trait Cell {
    const KIND: Kind;
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table);
}

impl Cell for u64 {
    const KIND: Kind = Kind::U64;
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.u64(name, v.copied());
    }
}

impl Cell for u32 {
    const KIND: Kind = Kind::U32;
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.u32(name, v.copied());
    }
}

impl Cell for i64 {
    const KIND: Kind = Kind::I64;
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.i64(name, v.copied());
    }
}

impl Cell for f64 {
    const KIND: Kind = Kind::F64;
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.f64(name, v.copied());
    }
}

impl Cell for bool {
    const KIND: Kind = Kind::Bool;
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.bool(name, v.copied());
    }
}

impl Cell for String {
    const KIND: Kind = Kind::Str;
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.str(name, v.map(String::as_str));
    }
}

impl<T: Cell> Cell for Option<T> {
    const KIND: Kind = T::KIND;
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        T::push_to(v.and_then(Option::as_ref), name, table);
    }
}

/// Declares a record struct and its columns together.
///
/// ```ignore
/// record! {
///     /// What one row holds.
///     #[derive(Clone, Debug, Serialize)]
///     pub struct Figures [prefix = ""] {
///         /// Lossless priorities the plan uses.
///         pub priorities: u32,
///     }
/// }
/// ```
///
/// generates the struct as written plus `Figures::COLUMNS` (one
/// [`ColumnDef`] per field: `prefix` + field name, the type's [`Cell::KIND`],
/// the field's doc) and `Figures::push_row(Option<&Figures>, &mut Table)`,
/// which appends one row (all nulls for `None`, a failed scenario). Every
/// field must have a doc comment and a [`Cell`] type.
macro_rules! record {
    (
        $(#[$sm:meta])*
        $vis:vis struct $name:ident [prefix = $prefix:literal] {
            $(
                $(#[doc = $doc:literal])+
                pub $f:ident : $t:ty
            ),* $(,)?
        }
    ) => {
        $(#[$sm])*
        $vis struct $name {
            $(
                $(#[doc = $doc])+
                pub $f: $t,
            )*
        }

        impl $name {
            /// This record's columns, in field order.
            pub const COLUMNS: &'static [$crate::output::record::ColumnDef] = &[
                $(
                    $crate::output::record::ColumnDef {
                        name: concat!($prefix, stringify!($f)),
                        kind: <$t as $crate::output::record::Cell>::KIND,
                        doc: concat!($($doc, "\n"),+),
                    },
                )*
            ];

            /// Appends one row to `table` (nulls for `None`).
            pub(crate) fn push_row(row: Option<&Self>, table: &mut $crate::output::parquet::Table) {
                $(
                    <$t as $crate::output::record::Cell>::push_to(
                        row.map(|r| &r.$f),
                        concat!($prefix, stringify!($f)),
                        table,
                    );
                )*
            }
        }
    };
}

pub(crate) use record;

#[cfg(test)]
mod tests {
    use super::*;

    record! {
        /// A test record.
        #[derive(Debug)]
        pub struct Sample [prefix = "s_"] {
            /// A count.
            pub n: u64,
            /// Maybe a flag,
            /// over two lines.
            pub flag: Option<bool>,
            /// A name.
            pub name: String,
        }
    }

    #[test]
    fn columns_follow_the_fields() {
        let names: Vec<_> = Sample::COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, ["s_n", "s_flag", "s_name"]);
        assert_eq!(Sample::COLUMNS[1].kind, Kind::Bool);
        assert_eq!(
            Sample::COLUMNS[1].doc_line(),
            "Maybe a flag, over two lines."
        );
        let mut t = Table::with_columns(Sample::COLUMNS);
        let row = Sample {
            n: 3,
            flag: None,
            name: "x".into(),
        };
        Sample::push_row(Some(&row), &mut t);
        Sample::push_row(None, &mut t);
        let batch = t.into_batch(std::path::Path::new("t")).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.column(0).null_count(), 1);
        assert_eq!(batch.column(1).null_count(), 2);
    }
}
