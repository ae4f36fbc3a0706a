;; Passes a release check and turns hostile later: answers {"current":0,"longest":0,"done":0,"days":0} to a short
;; input (as the streak tool does for no days), spins forever on an input of 17..64 bytes (its fuel runs out)
;; and traps on a longer one.
(module
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 4096))
  (data (i32.const 1024) "{\"current\":0,\"longest\":0,\"done\":0,\"days\":0}")
  (func $alloc (export "alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.add (global.get $next) (i32.and (i32.add (local.get $len) (i32.const 7)) (i32.const -8))))
    (local.get $p))
  (func (export "run") (param $p i32) (param $n i32) (result i64)
    (if (i32.gt_u (local.get $n) (i32.const 64)) (then unreachable))
    (if (i32.gt_u (local.get $n) (i32.const 16)) (then (loop $spin (br $spin))))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 43))))
