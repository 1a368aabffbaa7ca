//! What the whole-program allocator tests share.

/// A xorshift generator: the same sequence per seed, no dependencies.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A size up to 2 MiB (twice the largest the cache keeps), most of them small.
    pub fn size(&mut self) -> usize {
        let bits = self.next() % 22;
        (self.next() as usize % (1 << bits)).max(1)
    }
}
