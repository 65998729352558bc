// Warmfeed's thin client: appends the next server-rendered page when a
// sentinel row comes into view, and keeps the URL on the page being read.
(() => {
  const d = document, h = history, feed = d.querySelector('[role=feed]')
  d.documentElement.classList.add('js')
  if (!feed) return
  h.scrollRestoration = 'manual'
  const $ = (s, r = feed) => [...r.querySelectorAll(s)], top = n => n.getBoundingClientRect().top
  // The last of `l` (in document order) whose top is in the upper third of the
  // screen, by bisection: a few layout reads a frame, not one a row.
  const above = l => {
    let a = 0, b = l.length
    while (a < b) { const m = a + b >> 1; top(l[m]) < innerHeight / 3 ? a = m + 1 : b = m }
    return a - 1
  }
  const see = (f, m) => new IntersectionObserver(es => es.forEach(f), { rootMargin: m })
  // A sentinel already passed (a fling, the End key) counts as seen.
  const io = see(e => e.isIntersecting && load(e.target), '1e6px 0px 0px')
  const watch = () => $('.sentinel:not([data-s])').forEach(s => io.observe(s))
  let err, timer, next

  // Thumbnails within two screens load nearest first, five at a time: the
  // browser's sixth connection stays free for pages however slow the origin, and
  // on a phone's 150 ms round trips four at a time fell behind a reader at 3,000 px/s.
  // Those the reader has already passed wait for every one ahead of them. Every
  // position is read before any load starts: one layout, however many start.
  const near = new Set(), fly = new Set()
  const lo = see(e => { near[e.isIntersecting ? 'add' : 'delete'](e.target); pump() }, '200% 0px')
  const own = i => { fly.add(i); i.onload = i.onerror = () => { fly.delete(i); pump() } }
  let y = scrollY, dir = 1
  function pump () {
    if (fly.size > 4 || !near.size) return
    const H = innerHeight, by = [...near].map(m => {
      const r = m.getBoundingClientRect()
      return [(r.top - H / 2) ** 2 + ((dir > 0 ? r.bottom < 0 : r.top > H) && 1e9), m]
    })
    for (const [, i] of by.sort((a, b) => a[0] - b[0]).slice(0, 5 - fly.size)) {
      near.delete(i)
      lo.unobserve(i)
      own(i), i.srcset = i.dataset.srcset, i.src = i.dataset.src
    }
  }
  const take = i => {
    for (const a of ['src', 'srcset']) i.dataset[a] ||= i.getAttribute(a), i.removeAttribute(a)
    i.removeAttribute('loading')
    return i
  }
  for (const i of $('img')) if (!i.complete) top(i) < innerHeight ? own(i) : lo.observe(take(i))
  // Pages are parsed inert (a template's images do not load).
  function put (html, at) {
    const t = d.createElement('template')
    t.innerHTML = html
    const is = $('img', t.content).map(take)
    at(t.content)
    is.forEach(i => lo.observe(i))
  }

  async function load (s, tries = 0) {
    if (s.dataset.s) return
    s.dataset.s = 'l'
    feed.ariaBusy = true
    clearTimeout(timer)
    if (err) err.remove()
    try {
      const r = await fetch(s.dataset.fragment)
      if (!r.ok) throw r.status
      const html = await r.text()
      s.dataset.s = 'd'
      io.unobserve(s)
      put(html, f => feed.append(f))
      restore()
      watch()
      fit()
      if (next) go(next, 1)
    } catch (e) {
      delete s.dataset.s
      feed.insertAdjacentHTML('afterend', '<div class="feed-error" role="alert">The next page did not load. <button>Retry</button></div>')
      err = feed.nextSibling
      err.lastChild.onclick = () => load(s)
      // Server errors and lost connections heal: retry with backoff.
      if (!(e >= 400 && e < 500)) timer = setTimeout(() => load(s, tries + 1), Math.min(3e4, 1e3 * 2 ** tries))
    }
    feed.ariaBusy = false
  }

  // Pages far away give way to a spacer of their height that keeps their HTML.
  const back = n => put(n.h, f => n.replaceWith(f))
  function fit () {
    const H = innerHeight, u = $('[data-page], .gap'), f = d.activeElement.closest('article'), r = new Range()
    const c = above(u)
    u.forEach((n, k) => {
      const m = u[k + 1], a = top(n), b = m && top(m)
      if (!m || b > -2 * H && a < 3 * H) return n.h && back(n)
      r.setStartBefore(n)
      r.setEndBefore(m)
      if (n.h || Math.abs(k - c) < 6 || f && r.intersectsNode(f)) return
      const sp = d.createElement('div')
      sp.append(r.extractContents())
      sp.h = sp.innerHTML
      sp.innerHTML = ''
      sp.className = 'gap'
      sp.style.height = b - a + 'px'
      r.insertNode(sp)
    })
  }

  // The feed pattern's keys: Page Down / Up, Ctrl+End / Home.
  function go (a, down) {
    let n = a
    next = 0
    while ((n = down ? n.nextElementSibling : n.previousElementSibling) && n.tagName != 'ARTICLE') if (n.h) back(n), n = a
    if (n) n.focus()
    else if (down && (n = $('.sentinel').pop())) next = a, load(n)
  }
  feed.addEventListener('keydown', e => {
    const k = e.key, a = e.target.closest('article'), end = k == 'End'
    if (a && /^Page/.test(k)) go(a, k == 'PageDown')
    else if (e.ctrlKey && (end || k == 'Home')) d.querySelector(end ? '.foot a' : '.brand')?.focus()
    else return
    e.preventDefault()
  })

  // Keep the URL on the page in view, with the offset into it; when that page
  // changes, fit the document around it (not on every frame: a phone's CPU).
  let tick, last = 0, idle, at
  function track () {
    if (scrollY != y) dir = scrollY > y ? 1 : -1, y = scrollY
    const l = $('article[data-url]'), cur = l[above(l)]
    if (!cur) return
    if (cur != at) at = cur, fit()
    const url = cur.dataset.url, now = Date.now()
    // Browsers throttle replaceState: at once for a new page, else once a second and at the stop.
    clearTimeout(idle)
    if (url === location.pathname + location.search && now - last < 1e3) { idle = setTimeout(() => { last = 0; track() }, 250); return }
    last = now
    h.replaceState({ dy: Math.round(-top(cur)) }, '', url)
  }
  addEventListener('scroll', () => { tick = tick || requestAnimationFrame(() => { tick = 0; track() }) })
  for (const e of ['pagehide', 'beforeunload']) addEventListener(e, () => { last = 0; track() })

  // Restore the saved offset, past this document's end once pages are appended.
  const first = feed.querySelector('article[data-url]')
  let want = first && h.state && h.state.dy > 0 ? top(first) + scrollY + h.state.dy : null
  function restore () {
    if (want == null) return
    scrollTo(0, want)
    if (Math.abs(scrollY - want) < 2) want = null
  }
  // Once the reader scrolls on their own, stop steering.
  for (const e of ['wheel', 'touchstart', 'keydown']) addEventListener(e, () => { want = null }, { once: true })
  restore()
  watch()
})()
