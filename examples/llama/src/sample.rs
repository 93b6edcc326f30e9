//! Choosing the next token from logits: greedy, or top-k / top-p sampling
//! with a seeded xorshift64* generator.

/// A sampler. `top_k == 0` and `top_p >= 1` disable those filters; with
/// `greedy` the argmax is taken (the lowest id on ties, as `torch.argmax`).
pub struct Sampler {
    pub greedy: bool,
    pub top_k: usize,
    pub top_p: f32,
    pub temperature: f32,
    state: u64,
}

impl Sampler {
    pub fn greedy() -> Sampler {
        Sampler {
            greedy: true,
            top_k: 0,
            top_p: 1.0,
            temperature: 1.0,
            state: 1,
        }
    }

    pub fn new(top_k: usize, top_p: f32, temperature: f32, seed: u64) -> Sampler {
        // A zero state would stay zero.
        let state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        Sampler {
            greedy: false,
            top_k,
            top_p,
            temperature,
            state,
        }
    }

    /// A uniform number in [0, 1) (xorshift64*).
    fn uniform(&mut self) -> f32 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let r = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (r >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn next(&mut self, logits: &[f32]) -> u32 {
        let argmax = || {
            let mut best = 0;
            for (i, &l) in logits.iter().enumerate() {
                if l > logits[best] {
                    best = i;
                }
            }
            best as u32
        };
        if self.greedy || self.temperature <= 0.0 {
            return argmax();
        }
        let mut order: Vec<usize> = (0..logits.len()).collect();
        order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(a.cmp(&b)));
        if self.top_k > 0 {
            order.truncate(self.top_k);
        }
        let max = logits[order[0]];
        let mut probs: Vec<f32> = order
            .iter()
            .map(|&i| ((logits[i] - max) / self.temperature).exp())
            .collect();
        let sum: f32 = probs.iter().sum();
        probs.iter_mut().for_each(|p| *p /= sum);
        // top-p: the smallest prefix whose mass reaches p (at least one).
        let mut mass = 0.0;
        let mut keep = probs.len();
        for (k, &p) in probs.iter().enumerate() {
            mass += p;
            if mass >= self.top_p {
                keep = k + 1;
                break;
            }
        }
        let total: f32 = probs[..keep].iter().sum();
        let mut r = self.uniform() * total;
        for k in 0..keep {
            r -= probs[k];
            if r < 0.0 {
                return order[k] as u32;
            }
        }
        order[keep - 1] as u32
    }
}

#[cfg(test)]
mod tests {
    use super::Sampler;

    #[test]
    fn greedy_takes_the_first_maximum() {
        assert_eq!(Sampler::greedy().next(&[0.0, 3.0, 1.0, 3.0]), 1);
    }

    #[test]
    fn top_k_one_is_greedy_and_a_seed_reproduces_a_draw() {
        let logits = [0.5, 2.0, 1.9, -1.0];
        assert_eq!(Sampler::new(1, 1.0, 1.0, 7).next(&logits), 1);
        let draw = |seed| {
            let mut s = Sampler::new(3, 0.95, 1.0, seed);
            (0..32).map(|_| s.next(&logits)).collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        // Never outside the top 3.
        assert!(draw(5).iter().all(|&t| t != 3));
    }
}
