use super::*;
use crate::packed::call_packed;

fn rows(n: usize, start: f32) -> Tensor {
    let data: Vec<f32> = (0..n * 2).map(|i| start + i as f32).collect();
    Tensor::from_vec(&[n as i64, 2], data).unwrap()
}

fn create_cache(capacity: i64) -> Value {
    let init = Tensor::zeros(DataType::f32(), &[0, 2]).unwrap();
    call_packed(
        CREATE,
        &[init.into(), Value::shape(&[capacity, 2]), Value::Int(0)],
    )
    .unwrap()
}

fn view_f32(cache: &Value, n: i64) -> Vec<f32> {
    let v = call_packed(VIEW, &[cache.clone(), Value::shape(&[n, 2])]).unwrap();
    v.as_tensor().unwrap().to_vec::<f32>().unwrap()
}

#[test]
fn create_append_view_keep_the_storage_and_grow_the_fill_count() {
    let cache = create_cache(4);
    let Value::KvCache(c) = &cache else {
        panic!("expected a cache, found {cache:?}")
    };
    let storage = c.storage_ptr();
    assert_eq!(
        (c.capacity(), c.fill_count(), c.row_shape()),
        (4, 0, vec![2])
    );
    let out = call_packed(APPEND, &[cache.clone(), rows(3, 0.0).into()]).unwrap();
    assert_eq!(out, cache, "append returns the same cache");
    call_packed(APPEND, &[cache.clone(), rows(1, 10.0).into()]).unwrap();
    assert_eq!(c.fill_count(), 4);
    assert_eq!(c.storage_ptr(), storage, "no reallocation");
    assert_eq!(view_f32(&cache, 4), vec![0., 1., 2., 3., 4., 5., 10., 11.]);
    assert_eq!(
        cache.describe(),
        "a float32 KV cache of 4 rows of shape (2,), 4 filled"
    );
}

#[test]
fn create_with_initial_rows_and_an_explicit_fill_count() {
    let cache = call_packed(
        CREATE,
        &[rows(2, 1.0).into(), Value::shape(&[5, 2]), Value::Int(1)],
    )
    .unwrap();
    assert_eq!(view_f32(&cache, 1), vec![1., 2.]);
    let kept = call_packed(
        CREATE,
        &[rows(2, 1.0).into(), Value::shape(&[5, 2]), Value::Int(-1)],
    )
    .unwrap();
    assert_eq!(view_f32(&kept, 2), vec![1., 2., 3., 4.]);
    let e = call_packed(
        CREATE,
        &[rows(2, 1.0).into(), Value::shape(&[1, 2]), Value::Int(-1)],
    )
    .unwrap_err();
    assert!(e.to_string().contains("capacity is 1 rows"), "{e}");
}

#[test]
fn update_overwrites_popn_and_clear_shrink() {
    let cache = create_cache(4);
    call_packed(APPEND, &[cache.clone(), rows(3, 0.0).into()]).unwrap();
    call_packed(UPDATE, &[cache.clone(), rows(2, 7.0).into()]).unwrap();
    assert_eq!(view_f32(&cache, 2), vec![7., 8., 9., 10.]);
    let other = create_cache(3);
    call_packed(APPEND, &[other.clone(), rows(3, 0.0).into()]).unwrap();
    let both = Value::tuple(vec![cache.clone(), other.clone()]);
    // Popping more than one cache holds changes none of them.
    let e = call_packed(ARRAY_POPN, &[both.clone(), Value::Int(3)]).unwrap_err();
    assert!(e.to_string().contains("between 0 and 2 rows"), "{e}");
    call_packed(ARRAY_POPN, &[both.clone(), Value::Int(1)]).unwrap();
    assert_eq!(view_f32(&cache, 1), vec![7., 8.]);
    assert_eq!(view_f32(&other, 2), vec![0., 1., 2., 3.]);
    call_packed(ARRAY_CLEAR, &[both]).unwrap();
    assert_eq!(view_f32(&other, 0), Vec::<f32>::new());
}

#[test]
fn appending_past_the_capacity_is_an_error_naming_both_lengths() {
    let cache = create_cache(2);
    call_packed(APPEND, &[cache.clone(), rows(1, 0.0).into()]).unwrap();
    let e = call_packed(APPEND, &[cache.clone(), rows(2, 0.0).into()]).unwrap_err();
    assert_eq!(
        e.to_string(),
        crate::Error::Packed {
            name: APPEND.into(),
            message: "the cache's capacity is 2 rows; append of 2 rows after 1 needs 3".into()
        }
        .to_string()
    );
    // The failed append changed nothing.
    assert_eq!(view_f32(&cache, 1), vec![0., 1.]);
}

#[test]
fn wrong_rows_dtypes_views_and_arguments_are_errors() {
    let cache = create_cache(4);
    let wide = Tensor::zeros(DataType::f32(), &[1, 3]).unwrap();
    let e = call_packed(APPEND, &[cache.clone(), wide.into()]).unwrap_err();
    assert!(
        e.to_string().contains(
            "expected rows of shape (2,) (a value of shape (n, 2)) to append, found shape (1, 3)"
        ),
        "{e}"
    );
    let ints = Tensor::zeros(DataType::int(32), &[1, 2]).unwrap();
    let e = call_packed(APPEND, &[cache.clone(), ints.into()]).unwrap_err();
    assert!(
        e.to_string()
            .contains("expected a float32 value to append, found an int32 tensor of shape (1, 2)"),
        "{e}"
    );
    let e = call_packed(VIEW, &[cache.clone(), Value::shape(&[1, 2])]).unwrap_err();
    assert!(
        e.to_string().contains(
            "expected a view shape of (0, 2) (the fill count, then the row shape), found (1, 2)"
        ),
        "{e}"
    );
    let e = call_packed(APPEND, &[Value::Int(3), rows(1, 0.0).into()]).unwrap_err();
    assert!(
        e.to_string()
            .contains("expected a KV cache, found the integer 3"),
        "{e}"
    );
    let e = call_packed(APPEND, &[cache]).unwrap_err();
    assert!(
        e.to_string().contains("expected 2 arguments, found 1"),
        "{e}"
    );
}

#[test]
fn a_cache_round_trips_through_the_value_encoding() {
    let cache = create_cache(3);
    call_packed(APPEND, &[cache.clone(), rows(2, 5.0).into()]).unwrap();
    let Value::KvCache(c) = &cache else {
        unreachable!()
    };
    let (storage, fill) = c.snapshot();
    let copy = AttentionKvCache::from_parts(storage, fill).unwrap();
    assert_eq!(copy.fill_count(), 2);
    let copy = Value::KvCache(Arc::new(copy));
    assert_ne!(copy, cache, "a different object");
    assert_eq!(view_f32(&copy, 2), view_f32(&cache, 2));
    assert!(AttentionKvCache::from_parts(rows(2, 0.0), 3).is_err());
}

#[test]
fn a_view_shares_the_storage_and_a_write_under_a_live_view_copies_it() {
    let cache = create_cache(5);
    let Value::KvCache(c) = &cache else {
        panic!("expected a cache, found {cache:?}")
    };
    let storage = c.storage_ptr();
    call_packed(APPEND, &[cache.clone(), rows(2, 0.0).into()]).unwrap();
    let view = call_packed(VIEW, &[cache.clone(), Value::shape(&[2, 2])]).unwrap();
    let view = view.as_tensor().unwrap().clone();
    // In place: the view's bytes are the storage's first rows.
    assert_eq!(view.as_bytes().as_ptr(), storage);
    assert_eq!(view.shape(), &[2, 2]);
    assert_eq!(view.to_vec::<f32>().unwrap(), vec![0., 1., 2., 3.]);
    assert!(c.storage_is_shared());
    // An update under the live view writes into a copy: the view keeps
    // its rows (tensors are immutable), the cache has the new ones.
    call_packed(UPDATE, &[cache.clone(), rows(1, 7.0).into()]).unwrap();
    assert_eq!(view.to_vec::<f32>().unwrap(), vec![0., 1., 2., 3.]);
    assert_eq!(view_f32(&cache, 1), vec![7., 8.]);
    assert_ne!(c.storage_ptr(), storage, "copied on write");
    // With the view dropped, appends write in place again.
    drop(view);
    assert!(!c.storage_is_shared());
    let moved = c.storage_ptr();
    call_packed(APPEND, &[cache.clone(), rows(3, 20.0).into()]).unwrap();
    assert_eq!(c.storage_ptr(), moved, "no copy without a live view");
    assert_eq!(
        view_f32(&cache, 4),
        vec![7., 8., 20., 21., 22., 23., 24., 25.]
    );
}
