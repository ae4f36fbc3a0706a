// streak-score: a code tool in AssemblyScript, built with the ABI of docs/code-skills.md.
//
// Input:  {"days": [1, 0, 1, 1, ...]}   one entry per day, oldest first: 1 done, 0 missed (at most 366)
// Output: {"current": N, "longest": N, "done": N, "days": N}
//
// Built by `make code-tools` (npx asc, the stub runtime: a bump allocator, no garbage collector, nothing
// imported); every call runs in a fresh instance, so the allocator never needs to free.

const MAX_DAYS: i32 = 366;

export function alloc(len: i32): i32 {
  return <i32>heap.alloc(<usize>len);
}

function answer(text: string): i64 {
  const bytes = String.UTF8.encode(text);
  const ptr = <i64>changetype<usize>(bytes);
  return (ptr << 32) | <i64>bytes.byteLength;
}

function fail(code: string): i64 {
  return answer('{"error":"' + code + '"}');
}

export function run(ptr: i32, len: i32): i64 {
  // Find the array after "days"; read 0s and 1s separated by commas and spaces.
  let i = 0;
  let found = false;
  while (i + 6 <= len) {
    if (load<u8>(ptr + i) == 0x22 && load<u8>(ptr + i + 1) == 0x64 && load<u8>(ptr + i + 2) == 0x61 &&
        load<u8>(ptr + i + 3) == 0x79 && load<u8>(ptr + i + 4) == 0x73 && load<u8>(ptr + i + 5) == 0x22) {
      found = true;
      i += 6;
      break;
    }
    i++;
  }
  if (!found) return fail("no_days");
  while (i < len && load<u8>(ptr + i) != 0x5b) i++;  // [
  if (i >= len) return fail("no_days");
  i++;
  let days = 0, done = 0, current = 0, longest = 0;
  while (i < len) {
    const c = load<u8>(ptr + i);
    if (c == 0x5d) break;  // ]
    if (c == 0x31 || c == 0x30) {  // 1 or 0
      days++;
      if (days > MAX_DAYS) return fail("too_many_days");
      if (c == 0x31) {
        done++;
        current++;
        if (current > longest) longest = current;
      } else {
        current = 0;
      }
    } else if (c != 0x2c && c != 0x20) {  // , and space
      return fail("not_a_day");
    }
    i++;
  }
  return answer('{"current":' + current.toString() + ',"longest":' + longest.toString() +
                ',"done":' + done.toString() + ',"days":' + days.toString() + '}');
}
