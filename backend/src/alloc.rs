//! The server's allocator: mimalloc, asked for alignment only when a type
//! needs more than every block already has.
//!
//! The `mimalloc` crate sends every allocation to `mi_malloc_aligned`. In
//! mimalloc 3 that call leaves its fast path whenever the size class's free
//! list is empty, and then, for a size that is not a power of two,
//! over-allocates from a larger class and marks the page as holding interior
//! pointers, which slows the matching `free` too. A request's JSON is
//! mostly strings and vectors of odd sizes, so this took about 28 of every
//! validate request's allocations (callgrind). Plain `mi_malloc` has no such
//! detour.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The alignment `mi_malloc` gives every block of at least this size: its
/// size classes above one word are multiples of two words, and a page's
/// first block is aligned to 16 bytes (mimalloc's `MI_MAX_ALIGN_SIZE`).
const MALLOC_ALIGN: usize = 16;

/// Whether `mi_malloc` (and `mi_realloc`) already align a block of `size`
/// bytes to `align`: as Rust's own system allocator decides for `malloc`.
fn plain_suffices(align: usize, size: usize) -> bool {
    align <= MALLOC_ALIGN && align <= size
}

pub struct Allocator;

// SAFETY: each method forwards to the mimalloc call that returns a block of
// at least the layout's size and alignment (or null), and `mi_free` and
// `mi_realloc(_aligned)` accept every block the others return.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as the trait's contract allows (see above).
        unsafe {
            if plain_suffices(layout.align(), layout.size()) {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe {
            if plain_suffices(layout.align(), layout.size()) {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from one of this allocator's calls.
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`.
        unsafe {
            if plain_suffices(layout.align(), new_size) {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_have_the_alignment_their_layout_asks_for() {
        let allocator = Allocator;
        for align in [1, 2, 4, 8, 16, 32, 64, 128, 4096] {
            for size in [1, 3, 7, 8, 9, 15, 16, 17, 24, 40, 100, 1000, 5000] {
                let Ok(layout) = Layout::from_size_align(size, align) else {
                    continue;
                };
                // SAFETY: a non-zero size; the block is freed with its layout.
                unsafe {
                    let p = allocator.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size}, align {align}");
                    p.write_bytes(0xa5, size);
                    let q = allocator.realloc(p, layout, size * 3);
                    assert_eq!(
                        q as usize % align,
                        0,
                        "realloc to {}, align {align}",
                        size * 3
                    );
                    assert_eq!(*q.add(size - 1), 0xa5);
                    allocator.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = allocator.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0);
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    allocator.dealloc(z, layout);
                }
            }
        }
    }
}
