/// The Lua scripts `SharedTier` runs in Redis, each one atomic there: a
/// decision and its write with no other node's command between them.
extension SharedTier {
    /// A value, with the time to live of a failure: `{value, pttl}`; nil when
    /// there is none. A failure that would live longer than ARGV[1] ms (or
    /// for ever) is cut to that: `{value, pttl, 1}`.
    static let look = """
        local v = redis.call('get', KEYS[1])
        if not v then return nil end
        local t = redis.call('pttl', KEYS[1])
        local most = tonumber(ARGV[1])
        if string.sub(v, 1, 1) == 'N' and (t < 0 or t > most) then
          redis.call('pexpire', KEYS[1], most)
          return {v, most, 1}
        end
        return {v, t}
        """
    /// An original's record (its owner, or its failure, with its time to
    /// live), unless it names the asker itself (which lost the original: the
    /// record goes); else the claim taken (1), already this node's (1: an
    /// earlier ask ran after its answer was given up on) or held by another
    /// (0). A record or claim that would live longer than its ceiling (a
    /// failure ARGV[4] ms, an owner ARGV[5] ms, a claim ARGV[2] ms) or for
    /// ever is cut to it: `{value, pttl, 1}` for a record, 2 for a claim.
    static let claimOriginalScript = """
        local v = redis.call('get', KEYS[1])
        if v then
          if v == ARGV[3] then redis.call('del', KEYS[1]) else
            local t = redis.call('pttl', KEYS[1])
            local most = tonumber(string.sub(v, 1, 1) == 'N' and ARGV[4] or ARGV[5])
            if t < 0 or t > most then
              redis.call('pexpire', KEYS[1], most)
              return {v, most, 1}
            end
            return {v, t}
          end
        end
        local c = redis.call('get', KEYS[2])
        if c == ARGV[1] then
          redis.call('pexpire', KEYS[2], ARGV[2])
          return 1
        end
        if redis.call('set', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
        local t = redis.call('pttl', KEYS[2])
        if t < 0 or t > tonumber(ARGV[2]) then
          redis.call('pexpire', KEYS[2], ARGV[2])
          return 2
        end
        return 0
        """
    /// Records this node as the original's owner, then lets its claim go if it still holds it.
    static let own = """
        redis.call('set', KEYS[1], ARGV[2], 'EX', ARGV[3])
        if redis.call('get', KEYS[2]) == ARGV[1] then redis.call('del', KEYS[2]) end
        return 1
        """
    /// Records the original's failure for a while, then lets the claim go if this node still holds it.
    static let failOriginal = """
        redis.call('set', KEYS[1], 'N', 'PX', ARGV[2])
        if redis.call('get', KEYS[2]) == ARGV[1] then redis.call('del', KEYS[2]) end
        return 1
        """
    /// Deletes the owner record only if it still names that owner.
    static let forget = """
        if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
        return 0
        """
    /// Deletes the claim only if this node still holds it.
    static let release = """
        if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
        return 0
        """
    /// Extends the claim only if this node still holds it.
    static let renew = """
        if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
        return 0
        """
}
