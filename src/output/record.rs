//! One definition per result record. A struct declared with `record!` is
//! at once its JSON form (serde, field names as keys) and its Parquet
//! columns (the same names, in field order, with a type derived from each
//! field's Rust type and the field's doc comment as the column's doc), so a
//! new figure is added in one place and reaches `tagger run --json`,
//! `runs.parquet`, `tagger schema` and the sweep checker together.

pub use super::schema::{ColumnDef, json, markdown};

#[cfg(feature = "tables")]
use super::parquet::Table;
use super::schema::Kind;
#[cfg(feature = "tables")]
use super::schema::type_name;
#[cfg(feature = "tables")]
use crate::error::{Error, Result};
#[cfg(feature = "tables")]
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array,
    UInt64Array,
};

/// A Rust type that fills one column (nullable: `None` is a null), and
/// reads it back.
pub(crate) trait Cell: Sized {
    const KIND: Kind;
    #[cfg(feature = "tables")]
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table);
    /// The value at row `i` (`None`: null); `Err` when the column holds
    /// another type.
    #[cfg(feature = "tables")]
    fn read_from(col: &dyn Array, i: usize) -> std::result::Result<Option<Self>, ()>;
}

/// Row `i` of `col` through the arrow array type `A`.
#[cfg(feature = "tables")]
fn read_as<A: Array + 'static, T>(
    col: &dyn Array,
    i: usize,
    value: impl Fn(&A, usize) -> T,
) -> std::result::Result<Option<T>, ()> {
    let a = col.as_any().downcast_ref::<A>().ok_or(())?;
    Ok(a.is_valid(i).then(|| value(a, i)))
}

/// The column `name` of `batch`, for a record's read-back.
///
/// # Errors
/// [`Error::Column`] when `batch` has no such column.
#[cfg(feature = "tables")]
pub(crate) fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef> {
    batch.column_by_name(name).ok_or_else(|| Error::Column {
        column: name.to_string(),
        reason: "missing (the file was not written by this version's schema)".into(),
    })
}

/// The error for a column `name` of `col`'s type where `kind` was declared.
#[cfg(feature = "tables")]
pub(crate) fn wrong_type(name: &str, col: &ArrayRef, kind: Kind) -> Error {
    Error::Column {
        column: name.to_string(),
        reason: format!("holds {}, declared {}", col.data_type(), type_name(kind)),
    }
}

impl Cell for u64 {
    const KIND: Kind = Kind::U64;
    #[cfg(feature = "tables")]
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.u64(name, v.copied());
    }
    #[cfg(feature = "tables")]
    fn read_from(col: &dyn Array, i: usize) -> std::result::Result<Option<Self>, ()> {
        read_as(col, i, |a: &UInt64Array, i| a.value(i))
    }
}

impl Cell for u32 {
    const KIND: Kind = Kind::U32;
    #[cfg(feature = "tables")]
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.u32(name, v.copied());
    }
    #[cfg(feature = "tables")]
    fn read_from(col: &dyn Array, i: usize) -> std::result::Result<Option<Self>, ()> {
        read_as(col, i, |a: &UInt32Array, i| a.value(i))
    }
}

impl Cell for i64 {
    const KIND: Kind = Kind::I64;
    #[cfg(feature = "tables")]
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.i64(name, v.copied());
    }
    #[cfg(feature = "tables")]
    fn read_from(col: &dyn Array, i: usize) -> std::result::Result<Option<Self>, ()> {
        read_as(col, i, |a: &Int64Array, i| a.value(i))
    }
}

impl Cell for f64 {
    const KIND: Kind = Kind::F64;
    #[cfg(feature = "tables")]
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.f64(name, v.copied());
    }
    #[cfg(feature = "tables")]
    fn read_from(col: &dyn Array, i: usize) -> std::result::Result<Option<Self>, ()> {
        read_as(col, i, |a: &Float64Array, i| a.value(i))
    }
}

impl Cell for bool {
    const KIND: Kind = Kind::Bool;
    #[cfg(feature = "tables")]
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.bool(name, v.copied());
    }
    #[cfg(feature = "tables")]
    fn read_from(col: &dyn Array, i: usize) -> std::result::Result<Option<Self>, ()> {
        read_as(col, i, |a: &BooleanArray, i| a.value(i))
    }
}

impl Cell for String {
    const KIND: Kind = Kind::Str;
    #[cfg(feature = "tables")]
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        table.str(name, v.map(String::as_str));
    }
    #[cfg(feature = "tables")]
    fn read_from(col: &dyn Array, i: usize) -> std::result::Result<Option<Self>, ()> {
        read_as(col, i, |a: &StringArray, i| a.value(i).to_string())
    }
}

impl<T: Cell> Cell for Option<T> {
    const KIND: Kind = T::KIND;
    #[cfg(feature = "tables")]
    fn push_to(v: Option<&Self>, name: &'static str, table: &mut Table) {
        T::push_to(v.and_then(Option::as_ref), name, table);
    }
    #[cfg(feature = "tables")]
    fn read_from(col: &dyn Array, i: usize) -> std::result::Result<Option<Self>, ()> {
        Ok(Some(T::read_from(col, i)?))
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
/// which appends one row (all nulls for `None`, a failed scenario), and
/// `Figures::read_rows(&RecordBatch)`, which reads the rows back through the
/// same definitions. Every field must have a doc comment and a [`Cell`]
/// type.
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
            #[cfg(feature = "tables")]
            pub(crate) fn push_row(row: Option<&Self>, table: &mut $crate::output::parquet::Table) {
                $(
                    <$t as $crate::output::record::Cell>::push_to(
                        row.map(|r| &r.$f),
                        concat!($prefix, stringify!($f)),
                        table,
                    );
                )*
            }

            /// Reads every row of `batch` back through the columns that
            /// wrote it: `None` for a row whose non-optional fields are
            /// null (a failed scenario's).
            ///
            /// # Errors
            /// [`crate::Error::Column`] naming a column that `batch` lacks
            /// or holds with another type.
            #[allow(dead_code)]
            #[cfg(feature = "tables")]
            pub(crate) fn read_rows(
                batch: &arrow_array::RecordBatch,
            ) -> $crate::error::Result<Vec<Option<Self>>> {
                let cols = [
                    $( $crate::output::record::column(batch, concat!($prefix, stringify!($f)))?, )*
                ];
                (0..batch.num_rows())
                    .map(|i| {
                        let mut c = cols.iter();
                        Ok(Some(Self {
                            $(
                                $f: {
                                    let col = c.next().expect("one column per field");
                                    match <$t as $crate::output::record::Cell>::read_from(col.as_ref(), i) {
                                        Ok(Some(v)) => v,
                                        Ok(None) => return Ok(None),
                                        Err(()) => {
                                            return Err($crate::output::record::wrong_type(
                                                concat!($prefix, stringify!($f)),
                                                col,
                                                <$t as $crate::output::record::Cell>::KIND,
                                            ))
                                        }
                                    }
                                },
                            )*
                        }))
                    })
                    .collect()
            }
        }
    };
}

pub(crate) use record;

#[cfg(all(test, feature = "tables"))]
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
        // Read back through the same definitions: the row, and None for
        // the all-null one.
        let back = Sample::read_rows(&batch).unwrap();
        assert_eq!(back.len(), 2);
        let first = back[0].as_ref().unwrap();
        assert_eq!((first.n, first.flag, first.name.as_str()), (3, None, "x"));
        assert!(back[1].is_none());
        // A missing column and a column of another type are errors
        // naming the column, not a panic or a silent None.
        let without = batch.project(&[1, 2]).unwrap();
        let e = Sample::read_rows(&without).unwrap_err().to_string();
        assert!(e.contains("column 's_n': missing"), "{e}");
        let swapped = RecordBatch::try_new(
            std::sync::Arc::new(arrow_schema::Schema::new(vec![
                arrow_schema::Field::new("s_n", arrow_schema::DataType::Utf8, true),
                arrow_schema::Field::new("s_flag", arrow_schema::DataType::Boolean, true),
                arrow_schema::Field::new("s_name", arrow_schema::DataType::Utf8, true),
            ])),
            vec![
                batch.column(2).clone(),
                batch.column(1).clone(),
                batch.column(2).clone(),
            ],
        )
        .unwrap();
        let e = Sample::read_rows(&swapped).unwrap_err().to_string();
        assert!(e.contains("column 's_n': holds Utf8, declared u64"), "{e}");
    }
}
