//! What a component holds, counted before it is compiled (issue 40,
//! finding 1): wasmtime builds a copy-on-write image of every core
//! module's initial memory, so a small upload of many modules with sparse
//! data segments would compile to hundreds of megabytes. An upload is
//! refused past [`LIMITS`], which are above what the strategy world
//! needs (a Rust strategy holds one memory, 3 core modules and about a
//! megabyte of data; a Python one one memory, 38 core modules and 12.3 MiB).

use wasmparser::{DataKind, Operator, Parser, Payload};

/// The bounds an uploaded component must keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeLimits {
    /// Core modules, nested ones included.
    pub core_modules: u32,
    /// Linear memories defined by its core modules.
    pub memories: u32,
    /// Tables defined by its core modules.
    pub tables: u32,
    /// Data segments of its core modules.
    pub data_segments: u32,
    /// The sum over its memories of the highest byte an active data
    /// segment writes (what the initial memory images span).
    pub data_extent: u64,
}

/// The documented limits of an upload (docs/SECURITY.md). A Python
/// strategy (componentize-py 0.25.1) holds 38 core modules, one memory, 2
/// tables, 1,858 data segments and 12.3 MiB of data (issue 43; the core
/// modules were limited to 8 before).
pub const LIMITS: ShapeLimits = ShapeLimits {
    core_modules: 64,
    memories: 2,
    tables: 16,
    data_segments: 4_096,
    data_extent: 16 << 20,
};

/// What a component holds, counted over every core module in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    pub core_modules: u32,
    pub memories: u32,
    pub tables: u32,
    pub data_segments: u32,
    pub data_extent: u64,
}

/// Counts what `bytes` holds, reading each section header and data
/// segment once (no compilation); an error for bytes that do not parse or
/// an active segment whose offset is not a constant.
pub fn shape(bytes: &[u8]) -> Result<Shape, String> {
    let mut s = Shape::default();
    // The highest byte written per (module, memory), summed when a
    // module's sections end.
    let mut extents: Vec<u64> = Vec::new();
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(|e| e.to_string())? {
            Payload::ModuleSection { .. } => s.core_modules += 1,
            Payload::Version {
                encoding: wasmparser::Encoding::Module,
                ..
            } => extents.clear(),
            Payload::MemorySection(r) => s.memories += r.count(),
            Payload::TableSection(r) => s.tables += r.count(),
            Payload::DataSection(r) => {
                for data in r {
                    let data = data.map_err(|e| e.to_string())?;
                    s.data_segments += 1;
                    if let DataKind::Active {
                        memory_index,
                        offset_expr,
                    } = data.kind
                    {
                        let offset = constant(&offset_expr)?;
                        let end = offset.saturating_add(data.data.len() as u64);
                        let i = memory_index as usize;
                        if extents.len() <= i {
                            extents.resize(i + 1, 0);
                        }
                        extents[i] = extents[i].max(end);
                    }
                }
                s.data_extent = s.data_extent.saturating_add(extents.drain(..).sum::<u64>());
            }
            _ => {}
        }
    }
    // A bare core module (not a component) counts as one.
    if s.core_modules == 0 && wasmparser::Parser::is_core_wasm(bytes) {
        s.core_modules = 1;
    }
    Ok(s)
}

/// The value of a data segment's offset: an `i32.const` or `i64.const`.
fn constant(expr: &wasmparser::ConstExpr<'_>) -> Result<u64, String> {
    let mut ops = expr.get_operators_reader();
    match ops.read().map_err(|e| e.to_string())? {
        Operator::I32Const { value } => Ok(u64::from(value as u32)),
        Operator::I64Const { value } => Ok(value as u64),
        other => Err(format!(
            "a data segment's offset is {other:?}, not a constant"
        )),
    }
}

impl Shape {
    /// The first of `limits` this shape exceeds, said in words.
    pub fn check(&self, limits: &ShapeLimits) -> Result<(), String> {
        let over = |what: &str, has: u64, most: u64| {
            Err(format!(
                "it holds {has} {what}, more than the {most} an uploaded strategy may"
            ))
        };
        if self.core_modules > limits.core_modules {
            return over(
                "core modules",
                self.core_modules.into(),
                limits.core_modules.into(),
            );
        }
        if self.memories > limits.memories {
            return over("memories", self.memories.into(), limits.memories.into());
        }
        if self.tables > limits.tables {
            return over("tables", self.tables.into(), limits.tables.into());
        }
        if self.data_segments > limits.data_segments {
            return over(
                "data segments",
                self.data_segments.into(),
                limits.data_segments.into(),
            );
        }
        if self.data_extent > limits.data_extent {
            return Err(format!(
                "its data segments span {} MiB of initial memory, more than the {} MiB an \
                 uploaded strategy may",
                self.data_extent.div_ceil(1 << 20),
                limits.data_extent >> 20
            ));
        }
        Ok(())
    }
}
