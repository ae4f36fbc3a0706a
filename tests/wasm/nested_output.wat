;; Answers 60000 opening brackets: JSON nested deeper than any parser's stack.
(module
  (memory (export "memory") 2)
  (global $next (mut i32) (i32.const 4096))
  (func $alloc (export "alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.add (global.get $next) (local.get $len)))
    (local.get $p))
  (func (export "run") (param $p i32) (param $n i32) (result i64)
    (memory.fill (i32.const 65536) (i32.const 91) (i32.const 60000))
    (i64.or (i64.shl (i64.const 65536) (i64.const 32)) (i64.const 60000))))
