//! Column builders and the Parquet writer (zstd, key-value metadata).

pub use super::schema::Kind;

use crate::error::{Error, Result, TableFault};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array,
    UInt64Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::path::Path;
use std::sync::Arc;

/// A typed, nullable column under construction.
#[derive(Debug)]
pub(crate) enum Column {
    Str(Vec<Option<String>>),
    U64(Vec<Option<u64>>),
    U32(Vec<Option<u32>>),
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
}

impl Column {
    fn into_array(self) -> ArrayRef {
        match self {
            Column::Str(v) => Arc::new(StringArray::from(v)),
            Column::U64(v) => Arc::new(UInt64Array::from(v)),
            Column::U32(v) => Arc::new(UInt32Array::from(v)),
            Column::I64(v) => Arc::new(Int64Array::from(v)),
            Column::F64(v) => Arc::new(Float64Array::from(v)),
            Column::Bool(v) => Arc::new(BooleanArray::from(v)),
        }
    }
}

/// Named columns in a fixed order.
#[derive(Debug)]
pub(crate) struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

/// Rows are pushed only through a record's fields ([`super::record::Cell`]),
/// whose type is the one the column was declared with, so a value can
/// never meet a column of another type.
impl Table {
    /// A table whose columns exist (with their types) even with zero rows.
    pub fn with_columns(cols: &[super::schema::ColumnDef]) -> Self {
        let columns = cols
            .iter()
            .map(|d| {
                let n = d.name;
                let c = match d.kind {
                    Kind::Str => Column::Str(Vec::new()),
                    Kind::U64 => Column::U64(Vec::new()),
                    Kind::U32 => Column::U32(Vec::new()),
                    Kind::I64 => Column::I64(Vec::new()),
                    Kind::F64 => Column::F64(Vec::new()),
                    Kind::Bool => Column::Bool(Vec::new()),
                };
                (n, c)
            })
            .collect();
        Table { columns }
    }

    /// The declared column `name`; pushing to an undeclared one is a bug
    /// (it would silently add a column out of the documented order).
    fn col(&mut self, name: &str) -> &mut Column {
        let i = self
            .columns
            .iter()
            .position(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("column {name} is not declared"));
        &mut self.columns[i].1
    }
    pub(super) fn str(&mut self, name: &'static str, v: Option<impl Into<String>>) {
        match self.col(name) {
            Column::Str(c) => c.push(v.map(Into::into)),
            _ => unreachable!("column {name} is declared with the type its record pushes"),
        }
    }
    pub(super) fn u64(&mut self, name: &'static str, v: Option<u64>) {
        match self.col(name) {
            Column::U64(c) => c.push(v),
            _ => unreachable!("column {name} is declared with the type its record pushes"),
        }
    }
    pub(super) fn u32(&mut self, name: &'static str, v: Option<u32>) {
        match self.col(name) {
            Column::U32(c) => c.push(v),
            _ => unreachable!("column {name} is declared with the type its record pushes"),
        }
    }
    pub(super) fn i64(&mut self, name: &'static str, v: Option<i64>) {
        match self.col(name) {
            Column::I64(c) => c.push(v),
            _ => unreachable!("column {name} is declared with the type its record pushes"),
        }
    }
    pub(super) fn f64(&mut self, name: &'static str, v: Option<f64>) {
        match self.col(name) {
            Column::F64(c) => c.push(v),
            _ => unreachable!("column {name} is declared with the type its record pushes"),
        }
    }
    pub(super) fn bool(&mut self, name: &'static str, v: Option<bool>) {
        match self.col(name) {
            Column::Bool(c) => c.push(v),
            _ => unreachable!("column {name} is declared with the type its record pushes"),
        }
    }

    /// Writes the table as one Parquet file (see [`write_batches`]).
    ///
    /// # Errors
    /// [`Error::Parquet`] or [`Error::Io`] naming the path.
    pub fn write(self, path: &Path, metadata: &[(&str, String)]) -> Result<()> {
        write_batches(path, &[self.into_batch(path)?], metadata)
    }

    /// The table as one Arrow record batch.
    ///
    /// # Errors
    /// [`Error::Parquet`] if the columns have different lengths.
    pub fn into_batch(self, path: &Path) -> Result<RecordBatch> {
        // Every column is declared nullable, so tables from different runs
        // (with and without failed rows) share one schema.
        RecordBatch::try_from_iter_with_nullable(
            self.columns
                .into_iter()
                .map(|(n, c)| (n, c.into_array(), true)),
        )
        .map_err(|e| Error::Parquet {
            path: path.to_path_buf(),
            cause: TableFault::Arrow(e),
        })
    }
}

/// Opens a Parquet input, refusing what cannot be one as the text inputs
/// do: a directory, a device, a FIFO or a socket (a FIFO would block the
/// reader for ever, `/dev/zero` never ends).
fn open_regular(path: &Path) -> Result<std::fs::File> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a device, FIFO or socket)"
        };
        return Err(Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("is {what}; a Parquet input must be a regular file"),
            ),
        ));
    }
    std::fs::File::open(path).map_err(|e| Error::io(path, e))
}

/// Reads every record batch of a Parquet file.
///
/// # Errors
/// [`Error::Parquet`] or [`Error::Io`] naming the path.
pub fn read_batches(path: &Path) -> Result<Vec<RecordBatch>> {
    let pq = |cause: TableFault| Error::Parquet {
        path: path.to_path_buf(),
        cause,
    };
    let f = open_regular(path)?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .map_err(|e| pq(TableFault::Read(e)))?
        .build()
        .map_err(|e| pq(TableFault::Read(e)))?;
    reader
        .map(|b| b.map_err(|e| pq(TableFault::ReadBatch(e))))
        .collect()
}

/// The key-value metadata of a Parquet file, in file order.
///
/// # Errors
/// [`Error::Parquet`] or [`Error::Io`] naming the path.
pub fn read_metadata(path: &Path) -> Result<Vec<(String, String)>> {
    let f = open_regular(path)?;
    let b =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| {
            Error::Parquet {
                path: path.to_path_buf(),
                cause: TableFault::Read(e),
            }
        })?;
    Ok(b.metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|k| (k.key.clone(), k.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default())
}

/// The value of `key` in key-value metadata (as [`read_metadata`] gives it).
pub fn meta_value<'a>(kv: &'a [(String, String)], key: &str) -> Option<&'a str> {
    kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// The first of `keys` whose value differs between two files' metadata
/// (one present and the other not counts): tables of different sweeps.
pub fn differing_key<'k>(
    a: &[(String, String)],
    b: &[(String, String)],
    keys: &[&'k str],
) -> Option<&'k str> {
    keys.iter()
        .copied()
        .find(|k| meta_value(a, k) != meta_value(b, k))
}

/// True when `path` opens as Parquet (its footer and schema read).
pub fn readable(path: &Path) -> bool {
    open_regular(path)
        .ok()
        .and_then(|f| {
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).ok()
        })
        .is_some()
}

/// Writes batches of one schema as one Parquet file, atomically, with zstd
/// compression, dictionary encoding and `metadata` as key-value pairs.
///
/// # Errors
/// [`Error::Parquet`] or [`Error::Io`] naming the path.
pub fn write_batches(
    path: &Path,
    batches: &[RecordBatch],
    metadata: &[(&str, String)],
) -> Result<()> {
    crate::output::write_atomic_with(path, |f| write_batches_to(f, path, batches, metadata))
}

/// [`write_batches`] into `f` (a staged output's writer); `path` names it
/// in errors.
///
/// # Errors
/// [`Error::Parquet`] or [`Error::Io`] naming the path.
pub fn write_batches_to(
    f: &mut (dyn std::io::Write + Send),
    path: &Path,
    batches: &[RecordBatch],
    metadata: &[(&str, String)],
) -> Result<()> {
    let pq = |cause: TableFault| Error::Parquet {
        path: path.to_path_buf(),
        cause,
    };
    let Some(first) = batches.first() else {
        return Err(pq("no record batch to write".into()));
    };
    let schema = first.schema();
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).map_err(|e| pq(TableFault::Setting(e)))?,
        ))
        .set_dictionary_enabled(true)
        .set_key_value_metadata(Some(
            metadata
                .iter()
                .map(|(k, v)| KeyValue::new(k.to_string(), v.clone()))
                .collect(),
        ))
        .build();
    // The writer's own I/O error, kept: Parquet wraps it in a message that
    // no longer says what happened (a full disk reads "External: transport
    // error").
    let mut out = Recording {
        inner: f,
        error: None,
    };
    let result = (|| -> std::result::Result<(), parquet::errors::ParquetError> {
        let mut w = ArrowWriter::try_new(&mut out, schema.clone(), Some(props))?;
        for b in batches {
            w.write(b)?;
        }
        w.close()?;
        Ok(())
    })();
    match (result, out.error.take()) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(io)) => Err(Error::io(path, io)),
        (Err(e), None) => Err(pq(TableFault::Write(e))),
    }
}

/// A writer that keeps the first I/O error it passed on.
struct Recording<'a> {
    inner: &'a mut (dyn std::io::Write + Send),
    error: Option<std::io::Error>,
}

impl std::io::Write for Recording<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).inspect_err(|e| self.keep(e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|e| self.keep(e))
    }
}

impl Recording<'_> {
    fn keep(&mut self, e: &std::io::Error) {
        if self.error.is_none() {
            self.error = Some(std::io::Error::new(e.kind(), e.to_string()));
        }
    }
}
