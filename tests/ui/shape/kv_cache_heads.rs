// A decode step whose cached keys have fewer heads (2, grouped-query
// attention's KV heads) than its queries (4), used without repeating the
// KV heads: the batched matmul's head axes do not broadcast, and the error
// is on the attention scores, naming both shapes.
relax::module! {
    pub mod m {
        #[function(pure = false)]
        pub fn decode(
            q: Tensor![(1, 4, 16), f32],
            k: Tensor![(1, 2, 16), f32],
            cache: Object,
            total: Shape![(m,)],
        ) -> Tensor![(4, 1, m), f32] {
            let c = R::call_packed("vm.builtin.attention_kv_cache_append", cache, k, sinfo = Object);
            let keys = R::call_packed("vm.builtin.attention_kv_cache_view", c, R::shape([m, 2, 16]), sinfo = Tensor![(m, 2, 16), f32]);
            R::dataflow! {
                let qh = R::permute_dims(q, axes = [1, 0, 2]);
                let kh = R::permute_dims(keys, axes = [1, 2, 0]);
                let s = R::matmul(qh, kh);
                R::output(s);
            }
            s
        }
    }
}

fn main() {}
