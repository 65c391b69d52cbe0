//! The deterministic generator the tree builder and the mixed-call phase
//! share, so every run makes the same trees and issues the same calls.

/// A tiny deterministic generator (xorshift64*), so every run makes the
/// same trees and the same call mix.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
