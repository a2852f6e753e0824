//! The trend statistics behind the verdict: blocked Mann–Kendall and Theil–Sen, the normal
//! tail, robust noise, the source's quantum and the slope the readings can detect; and how
//! their figures are written.

use super::*;

/// Mann–Kendall and Theil–Sen over blocks of `(x, value)` points; pairs only within a block.
pub fn trend_test(blocks: &[Vec<(f64, f64)>]) -> TrendTest {
    let mut s: i64 = 0;
    let mut variance = 0.0;
    let mut slopes = Vec::new();
    let mut points = 0;
    let mut used_blocks = 0;
    for block in blocks {
        if block.len() < 2 {
            continue;
        }
        used_blocks += 1;
        points += block.len();
        for (i, &(xi, vi)) in block.iter().enumerate() {
            for &(xj, vj) in &block[i + 1..] {
                s += sign(vj - vi);
                if xj != xi {
                    slopes.push((vj - vi) / (xj - xi));
                }
            }
        }
        variance += mann_kendall_variance(block.iter().map(|&(_, v)| v));
    }
    let z = if variance <= 0.0 {
        0.0
    } else {
        (s - s.signum()) as f64 / variance.sqrt()
    };
    TrendTest {
        points,
        blocks: used_blocks,
        mann_kendall_s: s,
        variance,
        z,
        p_value: upper_tail(z),
        slope_bytes_per_request: median(&mut slopes).unwrap_or(0.0),
    }
}

fn sign(value: f64) -> i64 {
    if value > 0.0 {
        1
    } else if value < 0.0 {
        -1
    } else {
        0
    }
}

/// Var(S) = [n(n−1)(2n+5) − Σ t(t−1)(2t+5)] / 18, t the sizes of groups of tied values.
fn mann_kendall_variance(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let mut ties = 0.0;
    let mut start = 0;
    while start < values.len() {
        let mut end = start + 1;
        while end < values.len() && values[end] == values[start] {
            end += 1;
        }
        let t = (end - start) as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        start = end;
    }
    (n * (n - 1.0) * (2.0 * n + 5.0) - ties) / 18.0
}

/// P(Z > z) for a standard normal Z.
pub fn upper_tail(z: f64) -> f64 {
    if z == 0.0 {
        return 0.5; // exact; the fit below is off by 1.5e-8 there
    }
    (0.5 * erfc(z / std::f64::consts::SQRT_2)).clamp(0.0, 1.0)
}

/// Complementary error function, Chebyshev fit with fractional error below 1.2e-7
/// (Press et al., Numerical Recipes, 2nd ed., §6.2, `erfcc`).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let polynomial = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let result = t * polynomial.exp();
    if x >= 0.0 {
        result
    } else {
        2.0 - result
    }
}

pub(super) fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    Some(if values.len() % 2 == 0 {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    })
}

/// 1.4826 × MAD of successive within-block differences, / √2 (a difference of two readings
/// has twice the variance of one).
pub(super) fn noise(blocks: &[Vec<(f64, f64)>]) -> f64 {
    let mut differences: Vec<f64> = blocks
        .iter()
        .flat_map(|block| block.windows(2).map(|pair| pair[1].1 - pair[0].1))
        .collect();
    let Some(center) = median(&mut differences) else {
        return 0.0;
    };
    let mut deviations: Vec<f64> = differences.iter().map(|d| (d - center).abs()).collect();
    median(&mut deviations).unwrap_or(0.0) * 1.4826 / std::f64::consts::SQRT_2
}

/// Smallest non-zero change between successive readings of a block.
pub(super) fn quantum(blocks: &[Vec<(f64, f64)>]) -> Option<u64> {
    blocks
        .iter()
        .flat_map(|block| block.windows(2))
        .map(|pair| (pair[1].1 - pair[0].1).abs())
        .filter(|d| *d > 0.0)
        .map(|d| d as u64)
        .min()
}

/// Three standard errors of a within-block least-squares slope, given the noise.
pub(super) fn detectable_slope(blocks: &[Vec<(f64, f64)>], noise: f64) -> Option<f64> {
    let sxx: f64 = blocks
        .iter()
        .filter(|block| block.len() >= 2)
        .map(|block| {
            let mean = block.iter().map(|p| p.0).sum::<f64>() / block.len() as f64;
            block.iter().map(|p| (p.0 - mean).powi(2)).sum::<f64>()
        })
        .sum();
    (sxx > 0.0).then(|| 3.0 * noise / sxx.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) {
        assert!((a - b).abs() <= tolerance, "{a} is not {b} ± {tolerance}");
    }

    fn series(values: &[f64]) -> Vec<(f64, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (i as f64, *v))
            .collect()
    }

    #[test]
    fn mann_kendall_by_hand() {
        // 1..5: all 10 pairs increase; Var = 5·4·15/18 = 16.667; z = 9/√16.667 = 2.2045;
        // P(Z > 2.2045) = 0.01374 (normal table).
        let test = trend_test(&[series(&[1.0, 2.0, 3.0, 4.0, 5.0])]);
        assert_eq!(test.mann_kendall_s, 10);
        close(test.variance, 16.6667, 1e-3);
        close(test.z, 2.2045, 1e-3);
        close(test.p_value, 0.01374, 1e-4);
        close(test.slope_bytes_per_request, 1.0, 1e-12);
    }

    #[test]
    fn ties_reduce_the_variance() {
        // 1,1,2,2: S = 4; Var = (4·3·13 − 2·(2·1·9))/18 = 120/18 = 6.667; z = 3/2.582 = 1.162;
        // p = 0.1226.
        let test = trend_test(&[series(&[1.0, 1.0, 2.0, 2.0])]);
        assert_eq!(test.mann_kendall_s, 4);
        close(test.variance, 6.6667, 1e-3);
        close(test.p_value, 0.1226, 1e-3);
    }

    #[test]
    fn theil_sen_is_the_median_pairwise_slope() {
        // Slopes 2, 0.5, 4/3, −1, 1, 3 → sorted −1, 0.5, 1, 4/3, 2, 3 → median (1 + 4/3)/2.
        let test = trend_test(&[series(&[1.0, 3.0, 2.0, 5.0])]);
        close(test.slope_bytes_per_request, 7.0 / 6.0, 1e-12);
        assert_eq!(test.mann_kendall_s, 4);
    }

    #[test]
    fn blocks_ignore_a_step_between_them() {
        // Flat, then flat 100 higher: as one series a strong trend; as two blocks none.
        let low = series(&[10.0; 5]);
        let high = series(&[110.0; 5]);
        let joined: Vec<(f64, f64)> = [10.0; 5]
            .iter()
            .chain([110.0; 5].iter())
            .enumerate()
            .map(|(i, v)| (i as f64, *v))
            .collect();
        let naive = trend_test(&[joined]);
        assert_eq!(naive.mann_kendall_s, 25);
        assert!(naive.p_value < 0.01);
        let blocked = trend_test(&[low, high]);
        assert_eq!(blocked.mann_kendall_s, 0);
        assert_eq!(blocked.slope_bytes_per_request, 0.0);
    }

    #[test]
    fn normal_tail() {
        close(upper_tail(0.0), 0.5, 1e-7);
        close(upper_tail(1.96), 0.025, 1e-4);
        close(upper_tail(-1.0), 0.841_345, 1e-6);
        close(upper_tail(3.0), 0.001_35, 1e-5);
    }

    #[test]
    fn noise_ignores_a_linear_trend() {
        let leak = series(&[0.0, 8.0, 16.0, 24.0, 32.0, 40.0]);
        assert_eq!(noise(&[leak]), 0.0);
        // Differences 4, −4, 4, −4: median 0, MAD 4 → 4 × 1.4826 / √2 = 4.193.
        let jitter = series(&[0.0, 4.0, 0.0, 4.0, 0.0]);
        close(noise(&[jitter]), 4.1934, 1e-3);
    }
}
