//! The transform matrices of Winograd's minimal filtering algorithm
//! F(m, 3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
//! Networks", 2016): an output tile of `m` values of a 3-tap correlation
//! is `Aᵀ [(G g) ⊙ (Bᵀ d)]` for an input tile `d` of `α = m + 2` values,
//! with `α` multiplies instead of `3m`. In two dimensions
//! `Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`.
//!
//! F(2, 3) interpolates at the points 0, 1, -1, ∞; F(4, 3) at 0, ±1, ±2,
//! ∞. The larger tile saves more multiplies (4× against 2.25× in two
//! dimensions) at the cost of larger constants in `B` and `A`, so more
//! rounding error in `float32`.

/// The matrices of F(m, 3), row-major: `bt` is `Bᵀ` (α × α), `g` is `G`
/// (α × 3), `at` is `Aᵀ` (m × α).
#[derive(Clone, Copy, Debug)]
pub struct Matrices {
    /// The output tile's side `m`.
    pub m: usize,
    /// `Bᵀ`, α × α.
    pub bt: &'static [f64],
    /// `G`, α × 3.
    pub g: &'static [f64],
    /// `Aᵀ`, m × α.
    pub at: &'static [f64],
}

impl Matrices {
    /// The input tile's side `α = m + 2`.
    pub fn alpha(&self) -> usize {
        self.m + 2
    }

    /// `Bᵀ[i][a]`.
    pub fn bt(&self, i: usize, a: usize) -> f64 {
        self.bt[i * self.alpha() + a]
    }

    /// `G[i][k]`.
    pub fn g(&self, i: usize, k: usize) -> f64 {
        self.g[i * 3 + k]
    }

    /// `Aᵀ[r][i]`.
    pub fn at(&self, r: usize, i: usize) -> f64 {
        self.at[r * self.alpha() + i]
    }
}

#[rustfmt::skip]
const F2_BT: [f64; 16] = [
    1.0,  0.0, -1.0,  0.0,
    0.0,  1.0,  1.0,  0.0,
    0.0, -1.0,  1.0,  0.0,
    0.0,  1.0,  0.0, -1.0,
];
#[rustfmt::skip]
const F2_G: [f64; 12] = [
    1.0,  0.0, 0.0,
    0.5,  0.5, 0.5,
    0.5, -0.5, 0.5,
    0.0,  0.0, 1.0,
];
#[rustfmt::skip]
const F2_AT: [f64; 8] = [
    1.0, 1.0,  1.0,  0.0,
    0.0, 1.0, -1.0, -1.0,
];

#[rustfmt::skip]
const F4_BT: [f64; 36] = [
    4.0,  0.0, -5.0,  0.0, 1.0, 0.0,
    0.0, -4.0, -4.0,  1.0, 1.0, 0.0,
    0.0,  4.0, -4.0, -1.0, 1.0, 0.0,
    0.0, -2.0, -1.0,  2.0, 1.0, 0.0,
    0.0,  2.0, -1.0, -2.0, 1.0, 0.0,
    0.0,  4.0,  0.0, -5.0, 0.0, 1.0,
];
#[rustfmt::skip]
const F4_G: [f64; 18] = [
    1.0 / 4.0,   0.0,         0.0,
    -1.0 / 6.0, -1.0 / 6.0,  -1.0 / 6.0,
    -1.0 / 6.0,  1.0 / 6.0,  -1.0 / 6.0,
    1.0 / 24.0,  1.0 / 12.0,  1.0 / 6.0,
    1.0 / 24.0, -1.0 / 12.0,  1.0 / 6.0,
    0.0,         0.0,         1.0,
];
#[rustfmt::skip]
const F4_AT: [f64; 24] = [
    1.0, 1.0,  1.0, 1.0,  1.0, 0.0,
    0.0, 1.0, -1.0, 2.0, -2.0, 0.0,
    0.0, 1.0,  1.0, 4.0,  4.0, 0.0,
    0.0, 1.0, -1.0, 8.0, -8.0, 1.0,
];

/// F(2, 3).
pub const F2: Matrices = Matrices {
    m: 2,
    bt: &F2_BT,
    g: &F2_G,
    at: &F2_AT,
};

/// F(4, 3).
pub const F4: Matrices = Matrices {
    m: 4,
    bt: &F4_BT,
    g: &F4_G,
    at: &F4_AT,
};

/// The matrices for output tiles of side `m` (2 or 4).
pub fn for_tile(m: i64) -> Option<Matrices> {
    match m {
        2 => Some(F2),
        4 => Some(F4),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each F(m, 3) computes a 3-tap correlation exactly (in f64, up to
    /// rounding): `y[r] = Σ_k d[r + k] g[k]`.
    #[test]
    fn one_dimensional_tiles_are_correlations() {
        for f in [F2, F4] {
            let a = f.alpha();
            let d: Vec<f64> = (0..a).map(|i| (i as f64 * 0.7 - 1.3).sin()).collect();
            let g = [0.3, -1.1, 0.45];
            let u: Vec<f64> = (0..a)
                .map(|i| (0..3).map(|k| f.g(i, k) * g[k]).sum())
                .collect();
            let v: Vec<f64> = (0..a)
                .map(|i| (0..a).map(|j| f.bt(i, j) * d[j]).sum())
                .collect();
            for r in 0..f.m {
                let y: f64 = (0..a).map(|i| f.at(r, i) * u[i] * v[i]).sum();
                let want: f64 = (0..3).map(|k| d[r + k] * g[k]).sum();
                assert!(
                    (y - want).abs() < 1e-12,
                    "F({}, 3) row {r}: {y} vs {want}",
                    f.m
                );
            }
        }
    }
}
