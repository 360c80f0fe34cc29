//! The shared pool's and the event loop's prices, fitted to a measurement's
//! calibration phases as validation/REAL.md names it ("Runs counted"): a
//! thread's CPU per operation is its work plus a price per run on the core
//! times its runs per operation, so the straight line through C1 and C4
//! (writes at two rates) gives the request threads' run price and a
//! write's work, and the event loop's; C2's request CPU per read less the
//! run price times its runs per read gives a read's work, and C3's (reads
//! from disk) the same way a read from disk's, whose excess over C2's,
//! spread over C3's device reads per read, is the page miss's price
//! (REAL.md, "The page miss from the server's work", named 2026-11-30
//! before the measurement it was first fitted to). `twin validate --real
//! DIR --fit-runs` prints it, so anyone can redo the fit behind
//! `models::jvm::CASSANDRA_5_0_SEP`, `CASSANDRA_5_0_EVENT_LOOP_WAKE`,
//! `CASSANDRA_5_0_EVENT_LOOP_WORK`, the write's and read's factors and
//! `models::cost::CASSANDRA_5_0_PAGE_MISS_NS`.

use std::fmt::Write as _;

use crate::real::{
    Figure, Measurement, DEVICE_READS_FIGURE, EVENT_LOOP_CPU_FIGURE, EVENT_LOOP_RUNS_FIGURE,
    REQUEST_CPU_FIGURE, REQUEST_RUNS_FIGURE,
};

/// One thread's straight line: CPU per operation = work + run price x
/// runs per operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    /// CPU per run on the core, us.
    pub run_us: f64,
    /// CPU per operation besides its runs, us.
    pub work_us: f64,
    /// The two points it goes through: (runs per op, CPU us per op) at C1
    /// and C4, medians of the repeats.
    pub points: [(f64, f64); 2],
}

/// The fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunsFit {
    /// The request threads (the shared pool's workers).
    pub request: Line,
    /// The event loop.
    pub event_loop: Line,
    /// C2's request threads: (runs per read, CPU us per read), medians.
    pub read_point: (f64, f64),
    /// A read's work: C2's CPU per read less the request run price times
    /// its runs, us.
    pub read_work_us: f64,
    /// C3's request threads, (runs per read, CPU us per read), medians, if
    /// the measurement has C3: reads from disk after the page cache was
    /// dropped.
    pub disk_point: Option<(f64, f64)>,
    /// C3's device reads per read (the machine's disk counters), median,
    /// if the measurement has them.
    pub disk_reads: Option<f64>,
}

impl RunsFit {
    /// A read from disk's work by the same line (C3's CPU per read less
    /// the run price times its runs), us.
    pub fn disk_read_work_us(&self) -> Option<f64> {
        self.disk_point
            .map(|(runs, cpu)| cpu - self.request.run_us * runs)
    }

    /// The page miss's price: what a read from disk works beyond a read
    /// from memory, per device read it made, us; `None` without C3 or its
    /// disk counters, or if C3 read nothing from the device.
    pub fn page_miss_us(&self) -> Option<f64> {
        let reads = self.disk_reads.filter(|reads| *reads > 0.0)?;
        Some((self.disk_read_work_us()? - self.read_work_us) / reads)
    }
}

/// The median of `name` in `phase`, or why not.
fn median_of(all: &[Figure], phase: &str, name: &str) -> Result<f64, String> {
    all.iter()
        .find(|figure| figure.phase == phase && figure.name == name)
        .map(Figure::median)
        .filter(|value| value.is_finite())
        .ok_or_else(|| {
            format!("no '{name}' for phase {phase} (a measurement from `twin real` with the threads' runs, 2026-11-30 on)")
        })
}

/// The line through C1's and C4's (runs, CPU) of one thread kind.
fn line(all: &[Figure], cpu: &str, runs: &str) -> Result<Line, String> {
    let c1 = (median_of(all, "C1", runs)?, median_of(all, "C1", cpu)?);
    let c4 = (median_of(all, "C4", runs)?, median_of(all, "C4", cpu)?);
    if (c1.0 - c4.0).abs() < 1e-9 {
        return Err(format!(
            "C1 and C4 ran the same {runs} ({:.3}): no line through them",
            c1.0
        ));
    }
    let run_us = (c1.1 - c4.1) / (c1.0 - c4.0);
    Ok(Line {
        run_us,
        work_us: c1.1 - run_us * c1.0,
        points: [c1, c4],
    })
}

/// Fits the prices to `measurement`'s C1, C4 and C2 (at the reference
/// speed where its recorded speeds pass REAL.md's test:
/// [`crate::real_speed::figures_by_rule`]).
pub fn fit(measurement: &Measurement) -> Result<RunsFit, String> {
    let (all, _) =
        crate::real_speed::figures_by_rule(measurement).map_err(|error| error.to_string())?;
    let request = line(&all, REQUEST_CPU_FIGURE, REQUEST_RUNS_FIGURE)?;
    let event_loop = line(&all, EVENT_LOOP_CPU_FIGURE, EVENT_LOOP_RUNS_FIGURE)?;
    let read_point = (
        median_of(&all, "C2", REQUEST_RUNS_FIGURE)?,
        median_of(&all, "C2", REQUEST_CPU_FIGURE)?,
    );
    let disk_point = median_of(&all, "C3", REQUEST_RUNS_FIGURE)
        .and_then(|runs| Ok((runs, median_of(&all, "C3", REQUEST_CPU_FIGURE)?)))
        .ok();
    let disk_reads = median_of(&all, "C3", DEVICE_READS_FIGURE).ok();
    Ok(RunsFit {
        request,
        event_loop,
        read_point,
        read_work_us: read_point.1 - request.run_us * read_point.0,
        disk_point,
        disk_reads,
    })
}

/// The fit as `twin validate --real --fit-runs` prints it.
pub fn fit_text(fit: &RunsFit) -> String {
    let mut text = String::new();
    let mut line = |name: &str, what: &str, fitted: &Line, run_const: &str, work_const: &str| {
        let [(r1, c1), (r4, c4)] = fitted.points;
        let _ = writeln!(
            text,
            "{name}: C1 {c1:.2} us and {r1:.3} runs a {what}, C4 {c4:.2} us and {r4:.3} runs\n  \
             a run: {:.3} us ({run_const}); work: {:.3} us a {what} ({work_const})",
            fitted.run_us, fitted.work_us
        );
    };
    line(
        "request threads (the shared pool)",
        "write",
        &fit.request,
        "CASSANDRA_5_0_SEP.run_cost",
        "the write's price: CASSANDRA_5_0_WRITE_FACTOR scaled to it",
    );
    line(
        "event loop",
        "request",
        &fit.event_loop,
        "CASSANDRA_5_0_EVENT_LOOP_WAKE",
        "CASSANDRA_5_0_EVENT_LOOP_WORK",
    );
    let (runs, cpu) = fit.read_point;
    let _ = writeln!(
        text,
        "reads (C2): {cpu:.2} us and {runs:.3} runs a read\n  \
         work: {:.3} us a read (the read's price: CASSANDRA_5_0_READ_FACTOR scaled to it)",
        fit.read_work_us
    );
    if let (Some((runs, cpu)), Some(work)) = (fit.disk_point, fit.disk_read_work_us()) {
        let _ = writeln!(
            text,
            "reads from disk (C3): {cpu:.2} us and {runs:.3} runs a read\n  \
             work: {work:.3} us a read, {:.3} above a read from memory",
            work - fit.read_work_us
        );
        match (fit.disk_reads, fit.page_miss_us()) {
            (Some(reads), Some(miss)) => {
                let _ = writeln!(
                    text,
                    "  {reads:.3} device reads a read: a page miss {miss:.3} us \
                     (CASSANDRA_5_0_PAGE_MISS_NS)"
                );
            }
            _ => {
                let _ = writeln!(
                    text,
                    "  no device reads counted at C3: no page miss price (a measurement from \
                     `twin real` with the disk's counters, 2026-11-28 on, whose C3 read the disk)"
                );
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(phase: &str, name: &str, values: &[f64]) -> Figure {
        Figure {
            phase: phase.into(),
            name: name.into(),
            basis: crate::real::Basis::Fitted,
            values: values.to_vec(),
        }
    }

    #[test]
    fn the_line_through_two_rates_gives_the_run_price_and_the_work() {
        let all = vec![
            figure("C1", REQUEST_RUNS_FIGURE, &[7.0, 7.2, 7.144]),
            figure("C1", REQUEST_CPU_FIGURE, &[88.0, 90.0, 88.267]),
            figure("C4", REQUEST_RUNS_FIGURE, &[3.179]),
            figure("C4", REQUEST_CPU_FIGURE, &[46.058]),
        ];
        let fitted = line(&all, REQUEST_CPU_FIGURE, REQUEST_RUNS_FIGURE).expect("a line");
        // Medians (7.144, 88.267) and (3.179, 46.058).
        assert!((fitted.run_us - 10.645).abs() < 1e-3, "{}", fitted.run_us);
        assert!((fitted.work_us - 12.22).abs() < 1e-2, "{}", fitted.work_us);
        let missing = line(&all, EVENT_LOOP_CPU_FIGURE, EVENT_LOOP_RUNS_FIGURE);
        assert!(missing.is_err_and(|why| why.contains("event loop runs/op")));
        let flat = vec![
            figure("C1", REQUEST_RUNS_FIGURE, &[3.0]),
            figure("C1", REQUEST_CPU_FIGURE, &[40.0]),
            figure("C4", REQUEST_RUNS_FIGURE, &[3.0]),
            figure("C4", REQUEST_CPU_FIGURE, &[30.0]),
        ];
        assert!(line(&flat, REQUEST_CPU_FIGURE, REQUEST_RUNS_FIGURE).is_err());
    }

    /// The `cassandra-5.0` preset's prices are what `--fit-runs` gives on
    /// the measurement they were fitted to (CALIBRATION.md: the scored
    /// measurement of 2026-11-30-speed, three repeats), so a change to either
    /// shows.
    #[test]
    fn the_presets_prices_are_the_scored_measurements_fit() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("real/2026-11-30-speed");
        let fitted = fit(&crate::real::load(&dir).expect("the scored measurement")).expect("a fit");
        let us = |price: units::SimDuration| price.as_nanos() as f64 / 1e3;
        let close = |preset: f64, fit: f64, within: f64| {
            assert!(
                (preset - fit).abs() < within,
                "preset {preset} us, fit {fit} us"
            );
        };
        close(
            us(models::jvm::CASSANDRA_5_0_SEP.run_cost),
            fitted.request.run_us,
            0.005,
        );
        close(
            us(models::jvm::CASSANDRA_5_0_EVENT_LOOP_WAKE),
            fitted.event_loop.run_us,
            0.005,
        );
        close(
            us(models::jvm::CASSANDRA_5_0_EVENT_LOOP_WORK),
            fitted.event_loop.work_us,
            0.005,
        );
        // The write's price on C1's rows (178 B as the engine counts a
        // mutation of c-s's five 34-B columns).
        let costs = models::cost::CostTable::cassandra_5_0();
        close(us(costs.write_request(178)), fitted.request.work_us, 0.1);
        let text = fit_text(&fitted);
        assert!(
            text.contains("a run: 10.092 us") && text.contains("work: 48.893 us a read"),
            "{text}"
        );
        // C3's request threads: 428.3 us at 24.08 runs a read (REAL.md).
        let disk = fitted.disk_read_work_us().expect("the measurement has C3");
        assert!((disk - 185.35).abs() < 1.0, "{disk}");
        assert!(text.contains("reads from disk (C3)"), "{text}");
        // C3 read 1.296 times from the device a read: the page miss.
        let miss = fitted.page_miss_us().expect("C3 has its disk counters");
        close(
            models::cost::CASSANDRA_5_0_PAGE_MISS_NS as f64 / 1e3,
            miss,
            0.001,
        );
        assert!(text.contains("a page miss 105.290 us"), "{text}");
        // Without the disk's counters there is no price, and the text says
        // why.
        let blind = RunsFit {
            disk_reads: None,
            ..fitted
        };
        assert_eq!(blind.page_miss_us(), None);
        assert!(fit_text(&blind).contains("no device reads counted at C3"));
    }
}
