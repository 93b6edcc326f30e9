//! Sampling grids: `image.grid_sample` and `image.affine_grid` (TVM's
//! `relax.op.image.grid_sample` and `relax.op.image.affine_grid`).
//!
//! 1. `grid_sample(data, grid)`: `data` is `(N, C, H, W)` (layout `NCHW`)
//!    or `(N, C, D, H, W)` (`NCDHW`); `grid` is `(N, 2, Ho, Wo)` or
//!    `(N, 3, Do, Ho, Wo)`, its channel `k` the normalized coordinate
//!    along the `k`-th axis counted from the last (x along the width, then
//!    y, then z), in `[-1, 1]` across the image. The output is
//!    `(N, C, Ho, Wo)` (or with `Do`).
//! 2. A normalized coordinate `g` along an axis of length `L` is the pixel
//!    coordinate `(g + 1)/2 · (L - 1)` with `align_corners`, else
//!    `((g + 1)·L - 1)/2`. `nearest` rounds it half to even. Outside the
//!    bounds (`[0, L - 1]` with `align_corners`, else `[-0.5, L - 0.5]`)
//!    padding `border` clamps it to `[0, L - 1]` and `reflection` reflects
//!    it at the bounds until inside.
//! 3. `nearest` reads one pixel, `bilinear` the two around the coordinate
//!    per axis (weights `1 - t`, `t` for its fraction `t`), `bicubic` the
//!    four `floor - 1 ..= floor + 2` (Keys' cubic convolution with
//!    `A = -0.75`). A pixel index outside the image reads 0 under `zeros`,
//!    the nearest edge pixel under `border`, and the pixel reflected at the
//!    bounds under `reflection`. Sums run in `float64`, rounded once.
//!    This is PyTorch's `grid_sample` (and ONNX's `GridSample`).
//! 4. `affine_grid(data, size)`: `data` is `(N, 2, 3)` affine matrices,
//!    `size` the output `(H, W)`; the output `(N, 2, H, W)` holds at
//!    `(n, :, i, j)` the matrix `data[n]` applied to `(x_j, y_i, 1)`, where
//!    the base coordinate of index `j` along an axis of length `L` is
//!    `-1 + 2j/(L - 1)` with `align_corners` (`-1` when `L` is 1), else
//!    `-1 + (2j + 1)/L`.

use super::alloc;
use super::args::{check_arity, checked_numel, shape_arg, tensor_arg, tensor_value, view};
use super::dispatch::{with_float, with_num, Scalar, Wide};
use super::{Kernel, KernelAttrs};
use crate::value::Value;

/// The grid kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.image.grid_sample", grid_sample),
    ("relax.image.affine_grid", affine_grid),
];

/// How `grid_sample` interpolates (module docs, item 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridMethod {
    /// One pixel.
    Nearest,
    /// Two pixels per axis.
    Bilinear,
    /// Four pixels per axis.
    Bicubic,
}

/// What `grid_sample` reads outside the image (module docs, items 2, 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridPadding {
    /// Zero.
    Zeros,
    /// The nearest edge pixel.
    Border,
    /// The pixel reflected at the bounds.
    Reflection,
}

/// A `grid_sample`'s attributes, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridSampleMode {
    /// `method`.
    pub method: GridMethod,
    /// `padding_mode`.
    pub padding: GridPadding,
    /// `align_corners`.
    pub align_corners: bool,
    /// The number of spatial axes: 2 for `NCHW`, 3 for `NCDHW`.
    pub spatial: usize,
}

/// Keys' cubic coefficient `grid_sample` uses.
pub const GRID_CUBIC_ALPHA: f64 = -0.75;

impl GridSampleMode {
    /// The mode of the attribute values, or what is wrong with them.
    pub fn parse(
        method: &str,
        layout: &str,
        padding: &str,
        align_corners: bool,
    ) -> Result<GridSampleMode, String> {
        let method = match method {
            "nearest" => GridMethod::Nearest,
            "bilinear" => GridMethod::Bilinear,
            "bicubic" => GridMethod::Bicubic,
            m => {
                return Err(format!(
                    "method must be nearest, bilinear or bicubic, found {m}"
                ))
            }
        };
        let padding = match padding {
            "zeros" => GridPadding::Zeros,
            "border" => GridPadding::Border,
            "reflection" => GridPadding::Reflection,
            p => {
                return Err(format!(
                    "padding_mode must be zeros, border or reflection, found {p}"
                ))
            }
        };
        let spatial = match layout {
            "NCHW" => 2,
            "NCDHW" => 3,
            l => return Err(format!("layout {l} is not supported (NCHW and NCDHW are)")),
        };
        Ok(GridSampleMode {
            method,
            padding,
            align_corners,
            spatial,
        })
    }

    /// The bounds of pixel coordinates inside an axis of length `len`.
    pub fn bounds(&self, len: f64) -> (f64, f64) {
        if self.align_corners {
            (0.0, len - 1.0)
        } else {
            (-0.5, len - 0.5)
        }
    }

    /// The pixel coordinate of normalized coordinate `g` along an axis of
    /// length `len`, rounded (nearest) and moved inside by the padding
    /// (module docs, item 2).
    pub fn source(&self, g: f64, len: f64) -> f64 {
        let mut x = if self.align_corners {
            (g + 1.0) / 2.0 * (len - 1.0)
        } else {
            ((g + 1.0) * len - 1.0) / 2.0
        };
        if self.method == GridMethod::Nearest {
            x = x.round_ties_even();
        }
        let (lo, hi) = self.bounds(len);
        if x < lo || x > hi {
            x = match self.padding {
                GridPadding::Zeros => x,
                GridPadding::Border => x.clamp(0.0, len - 1.0),
                GridPadding::Reflection => reflect(x, lo, hi),
            };
        }
        x
    }

    /// The pixel a tap at integer position `i` reads along an axis of
    /// length `len`, or `None` for a zero (module docs, item 3).
    pub fn pixel(&self, i: f64, len: usize) -> Option<usize> {
        let last = len.checked_sub(1)? as f64;
        let i = match self.padding {
            GridPadding::Zeros if (0.0..=last).contains(&i) => i,
            GridPadding::Zeros => return None,
            GridPadding::Border => i.clamp(0.0, last),
            GridPadding::Reflection => {
                let (lo, hi) = self.bounds(len as f64);
                reflect(i, lo, hi).trunc().clamp(0.0, last)
            }
        };
        Some(i as usize)
    }

    /// The taps (integer position, weight) around pixel coordinate `x`.
    pub fn taps(&self, x: f64) -> Vec<(f64, f64)> {
        let f = x.floor();
        let t = x - f;
        match self.method {
            GridMethod::Nearest => vec![(x, 1.0)],
            GridMethod::Bilinear => vec![(f, 1.0 - t), (f + 1.0, t)],
            GridMethod::Bicubic => {
                let w = cubic_weights(t);
                (0..4).map(|k| (f - 1.0 + k as f64, w[k])).collect()
            }
        }
    }
}

/// Keys' cubic weights (coefficient [`GRID_CUBIC_ALPHA`]) of the pixels
/// `floor - 1 ..= floor + 2` for a fraction `t` past the floor.
pub fn cubic_weights(t: f64) -> [f64; 4] {
    let a = GRID_CUBIC_ALPHA;
    let near = |d: f64| ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
    let far = |d: f64| ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
    [far(1.0 + t), near(t), near(1.0 - t), far(2.0 - t)]
}

/// `x` reflected at `lo` and `hi` until inside (`lo` when they meet).
pub fn reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let span = hi - lo;
    if span <= 0.0 {
        return lo;
    }
    if x < lo {
        let d = lo - x;
        let n = (d / span).floor();
        let r = d - n * span;
        if n % 2.0 == 0.0 {
            lo + r
        } else {
            hi - r
        }
    } else if x > hi {
        let d = x - hi;
        let n = (d / span).floor();
        let r = d - n * span;
        if n % 2.0 == 0.0 {
            hi - r
        } else {
            lo + r
        }
    } else {
        x
    }
}

/// The mode of a `grid_sample` call's attributes.
fn mode_of(attrs: &KernelAttrs) -> Result<GridSampleMode, String> {
    let get = |name: &str, default: &'static str| -> Result<String, String> {
        match attrs.get(name) {
            None => Ok(default.to_string()),
            Some(_) => attrs.str(name).map(str::to_string),
        }
    };
    GridSampleMode::parse(
        &get("method", "bilinear")?,
        &get("layout", "NCHW")?,
        &get("padding_mode", "zeros")?,
        attrs.bool_or("align_corners", true)?,
    )
}

/// One axis's taps of an output point: (pixel, or `None` for a zero;
/// weight).
type AxisTaps = Vec<(Option<usize>, f64)>;

/// `relax.image.grid_sample(data, grid, …)` (module docs, items 1–3).
fn grid_sample(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let data = tensor_arg(args, 0, "data")?;
    let grid = tensor_arg(args, 1, "grid")?;
    let mode = mode_of(attrs)?;
    let k = mode.spatial;
    let (ds, gs) = (data.shape(), grid.shape());
    if ds.len() != k + 2 || gs.len() != k + 2 || gs[1] != k as i64 || gs[0] != ds[0] {
        return Err(format!(
            "data {ds:?} and grid {gs:?} must be (N, C, spatial…) and (N, {k}, out…)"
        ));
    }
    let mut out_shape = vec![ds[0], ds[1]];
    out_shape.extend_from_slice(&gs[2..]);
    checked_numel(&out_shape)?;
    let (n, c) = (ds[0] as usize, ds[1] as usize);
    let sizes: Vec<usize> = ds[2..].iter().map(|&d| d as usize).collect();
    let plane: usize = sizes.iter().product();
    let points: usize = gs[2..].iter().map(|&d| d as usize).product();
    let g: Vec<f64> = with_float!(grid.dtype(), G => {
        let v = view::<G>(grid)?;
        Ok(v.iter().map(|e| match e.to_wide() {
            Wide::Float(f) => f,
            Wide::Int(i) => i as f64,
        }).collect())
    })?;
    with_num!(data.dtype(), T => {
        let x = view::<T>(data)?;
        let x = x.as_slice().ok_or("data is not contiguous")?;
        let mut out = alloc::vec(n * c * points)?;
        for b in 0..n {
            // Per output point, the taps of each axis: (pixel, weight).
            let taps: Vec<Vec<AxisTaps>> = (0..points)
                .map(|p| {
                    (0..k)
                        .map(|a| {
                            let gv = g[(b * k + (k - 1 - a)) * points + p];
                            let len = sizes[a];
                            let s = mode.source(gv, len as f64);
                            mode.taps(s)
                                .into_iter()
                                .map(|(i, w)| (mode.pixel(i, len), w))
                                .collect()
                        })
                        .collect()
                })
                .collect();
            for ch in 0..c {
                let base = (b * c + ch) * plane;
                for axes in &taps {
                    // Every combination of one tap per axis.
                    let mut v = 0.0;
                    let mut idx = vec![0usize; k];
                    'combos: loop {
                        let mut w = 1.0;
                        let mut at = Some(0usize);
                        for a in 0..k {
                            let (pix, wa) = axes[a][idx[a]];
                            w *= wa;
                            at = match (at, pix) {
                                (Some(o), Some(i)) => Some(o * sizes[a] + i),
                                _ => None,
                            };
                        }
                        if let Some(o) = at {
                            let e = match x[base + o].to_wide() {
                                Wide::Float(f) => f,
                                Wide::Int(i) => i as f64,
                            };
                            v += e * w;
                        }
                        for a in (0..k).rev() {
                            idx[a] += 1;
                            if idx[a] < axes[a].len() {
                                continue 'combos;
                            }
                            idx[a] = 0;
                        }
                        break;
                    }
                    out.push(T::from_wide(Wide::Float(v)));
                }
            }
        }
        let shape: Vec<usize> = out_shape.iter().map(|&d| d as usize).collect();
        tensor_value(&shape, out)
    })
}

/// The base coordinate of index `j` along an axis of length `len`
/// (module docs, item 4).
pub fn affine_base(j: f64, len: f64, align_corners: bool) -> f64 {
    if align_corners {
        if len > 1.0 {
            -1.0 + 2.0 * j / (len - 1.0)
        } else {
            -1.0
        }
    } else {
        -1.0 + (2.0 * j + 1.0) / len
    }
}

/// `relax.image.affine_grid(data, size, align_corners)` (module docs,
/// item 4).
fn affine_grid(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let data = tensor_arg(args, 0, "data")?;
    let size = shape_arg(args, 1, "size")?;
    let align = attrs.bool_or("align_corners", false)?;
    let &[n, 2, 3] = data.shape() else {
        return Err(format!("data must be (N, 2, 3), found {:?}", data.shape()));
    };
    let &[h, w] = size else {
        return Err(format!("size must have 2 values, found {}", size.len()));
    };
    checked_numel(&[n, 2, h, w])?;
    let (n, h, w) = (n as usize, h as usize, w as usize);
    with_float!(data.dtype(), T => {
        let t = view::<T>(data)?;
        let t = t.as_slice().ok_or("data is not contiguous")?;
        let at = |i: usize| -> f64 {
            match t[i].to_wide() {
                Wide::Float(f) => f,
                Wide::Int(i) => i as f64,
            }
        };
        let mut out = alloc::vec(n * 2 * h * w)?;
        for b in 0..n {
            for r in 0..2 {
                let m = |col: usize| at(b * 6 + r * 3 + col);
                for i in 0..h {
                    let y = affine_base(i as f64, h as f64, align);
                    for j in 0..w {
                        let x = affine_base(j as f64, w as f64, align);
                        let v = m(0) * x + m(1) * y + m(2);
                        out.push(T::from_wide(Wide::Float(v)));
                    }
                }
            }
        }
        tensor_value(&[n, 2, h, w], out)
    })
}

#[cfg(test)]
mod tests {
    use crate::executable::KernelAttr;
    use crate::kernels::testing::{run, tv};
    use crate::value::Value;

    fn values(r: Result<Value, String>, shape: &[i64]) -> Vec<f64> {
        let Value::Tensor(t) = r.unwrap() else {
            panic!("not a tensor")
        };
        assert_eq!(t.shape(), shape);
        t.to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect()
    }

    fn close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-4, "{got:?} != {want:?}");
        }
    }

    fn sample(method: &str, padding: &str, align: bool) -> Vec<f64> {
        // data 1×1×3×2 = 0..6; grid points (x, y) in TVM's (N, 2, 1, 4).
        let data = tv(&[1, 1, 3, 2], (0..6).map(|v| v as f32).collect());
        let xs = [-1.2f32, -0.3, 0.6, 1.4];
        let ys = [-1.1f32, 0.2, 0.9, 1.3];
        let grid = tv(&[1, 2, 1, 4], xs.iter().chain(&ys).copied().collect());
        values(
            run(
                "relax.image.grid_sample",
                &[data, grid],
                &[
                    ("method", KernelAttr::Str(method.into())),
                    ("padding_mode", KernelAttr::Str(padding.into())),
                    ("align_corners", KernelAttr::Bool(align)),
                ],
            ),
            &[1, 1, 1, 4],
        )
    }

    /// Values of `torch.nn.functional.grid_sample` on the same input.
    #[test]
    fn matches_pytorch() {
        close(
            &sample("bilinear", "zeros", false),
            &[0.0, 2.8, 2.9250004, 0.0250001],
        );
        close(&sample("bilinear", "border", true), &[0.0, 2.75, 4.6, 5.0]);
        close(
            &sample("nearest", "reflection", false),
            &[0.0, 2.0, 5.0, 5.0],
        );
        close(
            &sample("bicubic", "zeros", true),
            &[-0.1673055, 3.4925306, 5.5594897, 3.2214291],
        );
    }

    #[test]
    fn affine_grid_applies_the_matrix_to_the_base_grid() {
        let theta = tv(&[1, 2, 3], vec![1.0f32, 0.0, 0.5, 0.0, 2.0, 0.0]);
        let got = values(
            run(
                "relax.image.affine_grid",
                &[theta.clone(), Value::shape(&[2, 2])],
                &[("align_corners", KernelAttr::Bool(true))],
            ),
            &[1, 2, 2, 2],
        );
        // x' = x + 0.5, y' = 2y over x, y in {-1, 1}.
        close(&got, &[-0.5, 1.5, -0.5, 1.5, -2.0, -2.0, 2.0, 2.0]);
        let got = values(
            run(
                "relax.image.affine_grid",
                &[theta, Value::shape(&[2, 2])],
                &[("align_corners", KernelAttr::Bool(false))],
            ),
            &[1, 2, 2, 2],
        );
        close(&got, &[0.0, 1.0, 0.0, 1.0, -1.0, -1.0, 1.0, 1.0]);
    }

    #[test]
    fn bad_calls_are_errors() {
        let data = tv(&[1, 1, 3, 2], vec![0.0f32; 6]);
        let grid = tv(&[1, 3, 1, 4], vec![0.0f32; 12]);
        assert!(run("relax.image.grid_sample", &[data.clone(), grid], &[]).is_err());
        let grid = tv(&[1, 2, 1, 4], vec![0.0f32; 8]);
        let bad = [("padding_mode", KernelAttr::Str("wrap".into()))];
        assert!(run("relax.image.grid_sample", &[data, grid], &bad)
            .unwrap_err()
            .contains("wrap"));
    }
}
