//! The sweep's tables read by column name.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};

/// A column of a table, by name, as optional values (a column the file
/// lacks: all `None`, so reports read files of older versions). Every name
/// asked for is one the tables declare: the test
/// `every_column_the_report_reads_is_declared` holds it, so a misspelt
/// name cannot silently chart nothing.
pub(super) struct Cols<'a>(pub(super) &'a [RecordBatch]);

impl Cols<'_> {
    pub(super) fn len(&self) -> usize {
        self.0.iter().map(RecordBatch::num_rows).sum()
    }
    pub(super) fn each<T>(
        &self,
        name: &str,
        f: impl Fn(&dyn Array, usize) -> Option<T>,
    ) -> Vec<Option<T>> {
        let mut out = Vec::with_capacity(self.len());
        for b in self.0 {
            match b.column_by_name(name) {
                Some(c) => out.extend((0..b.num_rows()).map(|i| {
                    if c.is_valid(i) {
                        f(c.as_ref(), i)
                    } else {
                        None
                    }
                })),
                None => out.extend((0..b.num_rows()).map(|_| None)),
            }
        }
        out
    }
    pub(super) fn str(&self, name: &str) -> Vec<Option<String>> {
        self.each(name, |c, i| {
            c.as_string_opt::<i32>().map(|s| s.value(i).to_string())
        })
    }
    pub(super) fn num(&self, name: &str) -> Vec<Option<f64>> {
        self.each(name, |c, i| {
            if let Some(a) = c.as_primitive_opt::<UInt64Type>() {
                Some(a.value(i) as f64)
            } else if let Some(a) = c.as_primitive_opt::<UInt32Type>() {
                Some(f64::from(a.value(i)))
            } else if let Some(a) = c.as_primitive_opt::<Int64Type>() {
                Some(a.value(i) as f64)
            } else {
                c.as_primitive_opt::<Float64Type>().map(|a| a.value(i))
            }
        })
    }
}
