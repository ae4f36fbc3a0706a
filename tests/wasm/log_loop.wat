;; Logs a code (with a number) in a loop of 100 calls, then answers the last response.
(module
  (import "skillcore" "log" (func $log (param i32 i32) (result i64)))
  (memory (export "memory") 1)
  (data (i32.const 16) "{\"code\":\"rows_parsed\",\"value\":3}")
  (global $next (mut i32) (i32.const 4096))
  (func $alloc (export "alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.add (global.get $next) (i32.and (i32.add (local.get $len) (i32.const 7)) (i32.const -8))))
    (block $ok
      (loop $more
        (br_if $ok (i32.le_u (global.get $next) (i32.mul (memory.size) (i32.const 65536))))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
        (br $more)))
    (local.get $p))
  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32)) (i64.extend_i32_u (local.get $n))))
  (func (export "run") (param $p i32) (param $n i32) (result i64)
    (local $i i32) (local $r i64)
    (loop $again
      (local.set $r (call $log (i32.const 16) (i32.const 32)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (local.get $n))))
    (local.get $r)))
