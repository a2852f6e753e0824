//! The step-aware least-squares test: the slope of memory per request after the level of
//! each repeat, a step at each input's first appearance and each input size's offset are
//! fitted away (modified Gram–Schmidt).

use super::*;

/// A nuisance term of the least-squares fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Term {
    /// The level of one repeat (a fresh process starts at its own level).
    Level(u32),
    /// A step at the first appearance of an input in a repeat: 1 from that reading on.
    Step(u32, u64),
    /// The offset of one input size against the most common one.
    Size(u64, bool),
}

/// One reading after warm-up, with the terms that are 1 for it.
struct Row {
    x: f64,
    y: f64,
    repeat: u32,
    terms: Vec<Term>,
}

/// The step-aware least-squares test over every reading after warm-up.
pub(super) fn step_regression(readings: &[Reading]) -> Option<StepRegression> {
    let mut seen: BTreeSet<(u32, u64, bool)> = BTreeSet::new();
    let mut steps: Vec<(u32, u64)> = Vec::new();
    let mut sizes: BTreeMap<(u64, bool), usize> = BTreeMap::new();
    for reading in readings {
        let shape = (reading.prompt_chars, reading.phase == Phase::Concurrent);
        let new_shape = seen.insert((reading.repeat, shape.0, shape.1));
        if reading.phase != Phase::Warmup {
            *sizes.entry(shape).or_default() += 1;
            if new_shape {
                steps.push((reading.repeat, reading.sequence));
            }
        }
    }
    let common = sizes
        .iter()
        .max_by_key(|(_, count)| **count)
        .map(|(shape, _)| *shape);
    let origin = readings.first()?.value;
    let rows: Vec<Row> = readings
        .iter()
        .filter(|r| r.phase != Phase::Warmup)
        .map(|reading| {
            let shape = (reading.prompt_chars, reading.phase == Phase::Concurrent);
            let mut terms = vec![Term::Level(reading.repeat)];
            terms.extend(
                steps
                    .iter()
                    .filter(|(repeat, at)| *repeat == reading.repeat && *at <= reading.sequence)
                    .map(|(repeat, at)| Term::Step(*repeat, *at)),
            );
            if Some(shape) != common {
                terms.push(Term::Size(shape.0, shape.1));
            }
            Row {
                x: reading.sequence as f64,
                y: reading.value - origin,
                repeat: reading.repeat,
                terms,
            }
        })
        .collect();
    let all: Vec<&Row> = rows.iter().collect();
    let (slope, standard_error, terms) = least_squares(&all)?;
    let repeats: BTreeSet<u32> = rows.iter().map(|r| r.repeat).collect();
    let repeat_slopes = repeats
        .iter()
        .filter_map(|repeat| {
            let subset: Vec<&Row> = rows.iter().filter(|r| r.repeat == *repeat).collect();
            least_squares(&subset).map(|fit| fit.0)
        })
        .collect();
    let mut positions: Vec<f64> = rows.iter().map(|r| r.x).collect();
    positions.sort_by(f64::total_cmp);
    let middle = positions.get(positions.len() / 2).copied().unwrap_or(0.0);
    let late: Vec<&Row> = rows.iter().filter(|r| r.x >= middle).collect();
    let p_value = if standard_error > 0.0 {
        upper_tail(slope / standard_error)
    } else if slope > 0.0 {
        0.0
    } else {
        1.0
    };
    Some(StepRegression {
        points: rows.len(),
        terms,
        slope_bytes_per_request: slope,
        standard_error,
        p_value,
        repeat_slopes,
        late_slope_bytes_per_request: least_squares(&late).map(|fit| fit.0),
    })
}

/// Slope of y on x after projecting both off the rows' terms (modified Gram–Schmidt), its
/// standard error, and the number of independent terms; `None` without a degree of freedom.
fn least_squares(rows: &[&Row]) -> Option<(f64, f64, usize)> {
    let terms: BTreeSet<Term> = rows.iter().flat_map(|r| r.terms.iter().copied()).collect();
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let project = |basis: &[Vec<f64>], vector: &mut Vec<f64>| {
        for q in basis {
            let dot: f64 = q.iter().zip(vector.iter()).map(|(a, b)| a * b).sum();
            for (v, q) in vector.iter_mut().zip(q) {
                *v -= dot * q;
            }
        }
    };
    for term in terms {
        let mut column: Vec<f64> = rows
            .iter()
            .map(|r| if r.terms.contains(&term) { 1.0 } else { 0.0 })
            .collect();
        project(&basis, &mut column);
        project(&basis, &mut column);
        let norm = column.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm > 1e-6 {
            basis.push(column.iter().map(|v| v / norm).collect());
        }
    }
    let mut x: Vec<f64> = rows.iter().map(|r| r.x).collect();
    let mut y: Vec<f64> = rows.iter().map(|r| r.y).collect();
    project(&basis, &mut x);
    project(&basis, &mut y);
    let sxx: f64 = x.iter().map(|v| v * v).sum();
    let freedom = rows.len().checked_sub(basis.len() + 1).filter(|f| *f > 0)?;
    if sxx < 1e-6 {
        return None;
    }
    let slope = x.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>() / sxx;
    let residual: f64 = x.iter().zip(&y).map(|(a, b)| (b - slope * a).powi(2)).sum();
    let standard_error = (residual / freedom as f64).sqrt() / sxx.sqrt();
    // Rounding error of the projections is far below a byte: report it as zero.
    let clean = |value: f64| if value.abs() < 1e-3 { 0.0 } else { value };
    let (slope, standard_error) = (clean(slope), clean(standard_error));
    Some((slope, standard_error, basis.len()))
}
