//! `prefix_exec._native`: the Python package's extension module (built by maturin, see
//! `python/pyproject.toml`). Thin: everything it does is in the library's `cli` module, so the
//! Python API and the `prefix-exec` command of the wheel run the code the native binary runs.
//! The pure-Python package (`python/prefix_exec/`) wraps these functions with the documented
//! API; this module's names are private to it.

use std::ffi::OsString;
use std::path::PathBuf;

use prefix_exec::cli::{self, Input, Scored};
use prefix_exec::report::ranks::RankMetric;
use prefix_exec::report::table;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

// mimalloc rather than the system's malloc, as in the CLI: see the root Cargo.toml.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    _native,
    PrefixExecError,
    PyValueError,
    "An error of prefix-exec, with the command line's message (a file that cannot be read, \
     input with no valid rollout, an unknown or invalid option)."
);

/// One input as the Python side hands it over: a path, or `(name, bytes)` held in memory.
#[derive(FromPyObject)]
enum PyInput<'py> {
    Path(PathBuf),
    Bytes(String, Bound<'py, PyBytes>),
}

fn inputs(given: Vec<PyInput<'_>>) -> Vec<Input> {
    given
        .into_iter()
        .map(|i| match i {
            PyInput::Path(p) => Input::Path(p),
            PyInput::Bytes(name, bytes) => Input::Bytes {
                name,
                bytes: bytes.as_bytes().to_vec(),
            },
        })
        .collect()
}

fn error(e: anyhow::Error) -> PyErr {
    PrefixExecError::new_err(format!("{e:#}"))
}

/// Runs the `prefix-exec` command line on `argv` (program name first) in this process, with the
/// GIL released; returns its exit code. Output goes to the process's stdout and stderr.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    py.detach(|| cli::run(argv))
}

/// A scored report: the Rust `Report`, its JSON (the CLI's bytes) and the input's diagnostics.
#[pyclass(frozen, module = "prefix_exec._native")]
struct NativeReport {
    scored: Scored,
    /// The exact bytes `score --json` writes, made once.
    #[pyo3(get)]
    json: String,
}

#[pymethods]
impl NativeReport {
    /// The input's problems, line-located, as the CLI prints them to stderr.
    #[getter]
    fn diagnostics(&self) -> Vec<String> {
        self.scored.diagnostics.clone()
    }

    /// The main table as `score` prints it.
    #[pyo3(signature = (decimals = 2, layout = None))]
    fn text(&self, decimals: usize, layout: Option<&str>) -> PyResult<String> {
        let report = &self.scored.report;
        Ok(table::render_text_as(
            report,
            decimals.min(6),
            layout_of(report, layout)?,
        ))
    }

    /// The main table as CSV, as the app's CSV export writes it for the table in report order.
    #[pyo3(signature = (decimals = 2, layout = None))]
    fn csv(&self, decimals: usize, layout: Option<&str>) -> PyResult<String> {
        let report = &self.scored.report;
        Ok(table::render_csv_as(
            report,
            layout_of(report, layout)?,
            None,
            decimals.min(6),
        ))
    }

    /// The main table as LaTeX, as the app's LaTeX export writes it for the table in report
    /// order, its rank column by `rank` (`final_success`, `ter` or `auc_pec`).
    #[pyo3(signature = (decimals = 2, intervals = true, layout = None, rank = "final_success"))]
    fn latex(
        &self,
        decimals: usize,
        intervals: bool,
        layout: Option<&str>,
        rank: &str,
    ) -> PyResult<String> {
        let report = &self.scored.report;
        let metric = RankMetric::from_key(rank).ok_or_else(|| {
            PrefixExecError::new_err(format!(
                "rank must be \"final_success\", \"ter\" or \"auc_pec\", got {rank:?}"
            ))
        })?;
        Ok(table::render_latex_ranked(
            report,
            decimals.min(6),
            intervals,
            layout_of(report, layout)?,
            None,
            metric,
        ))
    }
}

/// The table layout named (`paper`, `leaderboard`), or the one `score` chooses for the report.
fn layout_of(report: &prefix_exec::report::Report, name: Option<&str>) -> PyResult<table::Layout> {
    match name {
        None => Ok(table::Layout::default_for(report)),
        Some(name) => table::Layout::from_name(name).ok_or_else(|| {
            PrefixExecError::new_err(format!(
                "layout must be \"paper\" or \"leaderboard\", got {name:?}"
            ))
        }),
    }
}

/// Scores `inputs` with `score`'s flags (`--bootstrap 10000 --seed 0 …`) on `threads` threads
/// (default: every core), with the GIL released.
#[pyfunction]
#[pyo3(signature = (inputs, flags, threads = None))]
fn score(
    py: Python<'_>,
    inputs: Vec<PyInput<'_>>,
    flags: Vec<OsString>,
    threads: Option<usize>,
) -> PyResult<NativeReport> {
    let inputs = self::inputs(inputs);
    let scored = py
        .detach(|| with_threads(threads, || cli::score_inputs(&flags, inputs)))
        .map_err(error)?;
    let json = scored.report.to_json();
    Ok(NativeReport { scored, json })
}

/// The canonical JSONL `convert` writes for `inputs` with `convert`'s flags, and the input's
/// diagnostics; the GIL released.
#[pyfunction]
fn convert(
    py: Python<'_>,
    inputs: Vec<PyInput<'_>>,
    flags: Vec<OsString>,
) -> PyResult<(String, Vec<String>)> {
    let inputs = self::inputs(inputs);
    py.detach(|| cli::convert_inputs(&flags, inputs))
        .map_err(error)
}

/// `search --json` for the Python API: the search page as JSON (hits, total, what could not be
/// read) and the input's diagnostics; the GIL released.
#[pyfunction]
#[pyo3(signature = (inputs, flags, threads = None))]
fn search(
    py: Python<'_>,
    inputs: Vec<PyInput<'_>>,
    flags: Vec<OsString>,
    threads: Option<usize>,
) -> PyResult<(String, Vec<String>)> {
    let inputs = self::inputs(inputs);
    let (page, diagnostics) = py
        .detach(|| with_threads(threads, || cli::search_inputs(&flags, inputs)))
        .map_err(error)?;
    Ok((page.to_json(), diagnostics))
}

/// Runs `f` on a pool of `threads` threads, or on rayon's global pool (every core). A pool of
/// its own, not `build_global` as the CLI does: a Python process may score many times, with
/// different thread counts.
fn with_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    match threads {
        None => f(),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| anyhow::anyhow!("cannot start the thread pool: {e}"))?
            .install(f),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PrefixExecError", m.py().get_type::<PrefixExecError>())?;
    m.add_class::<NativeReport>()?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(search, m)?)?;
    Ok(())
}
