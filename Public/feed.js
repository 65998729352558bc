// Warmfeed's thin client: appends the next server-rendered page when a
// sentinel row comes into view, and keeps the URL on the page being read.
(() => {
  const d = document, h = history, feed = d.querySelector('[role=feed]')
  d.documentElement.classList.add('js')
  if (!feed || !window.IntersectionObserver || !window.fetch) return
  h.scrollRestoration = 'manual'
  // The root reaches far above the viewport: a sentinel the reader has already
  // passed (a fling, the End key) counts as seen, not only one in view.
  const io = new IntersectionObserver(es => { for (const e of es) if (e.isIntersecting) load(e.target) }, { rootMargin: '1000000px 0px 0px 0px' })
  const watch = () => feed.querySelectorAll('.sentinel:not([data-s])').forEach(s => io.observe(s))
  let err, timer

  async function load (s, tries = 0) {
    if (s.dataset.s) return
    s.dataset.s = 'l'
    feed.setAttribute('aria-busy', 'true')
    clearTimeout(timer)
    if (err) err.remove()
    try {
      const r = await fetch(s.dataset.fragment, { headers: { Accept: 'text/html' } })
      if (!r.ok) throw r.status
      const html = await r.text()
      s.dataset.s = 'd'
      io.unobserve(s)
      feed.insertAdjacentHTML('beforeend', html)
      restore()
      watch()
    } catch (e) {
      delete s.dataset.s
      err = d.createElement('div')
      err.className = 'feed-error'
      err.setAttribute('role', 'alert')
      err.innerHTML = 'The next page did not load. <button type="button">Retry</button>'
      err.querySelector('button').onclick = () => load(s)
      feed.append(err)
      // Server errors and lost connections heal: retry with backoff (1 s, 2 s, 4 s … 30 s).
      if (!(e >= 400 && e < 500)) timer = setTimeout(() => load(s, tries + 1), Math.min(3e4, 1e3 * 2 ** tries))
    }
    feed.setAttribute('aria-busy', 'false')
  }

  // Keep the URL on the page in view, with the offset into it, so reload and
  // back/forward land where the reader was.
  let tick, last = 0, idle
  function track () {
    tick = 0
    let cur
    for (const a of feed.querySelectorAll('article[data-url]')) {
      if (a.getBoundingClientRect().top > innerHeight / 3) break
      cur = a
    }
    if (!cur) return
    const url = cur.dataset.url, now = Date.now()
    // Browsers throttle replaceState: write at once when the page changes, else at
    // most once a second, and once more when scrolling stops.
    clearTimeout(idle)
    if (url === location.pathname + location.search && now - last < 1e3) { idle = setTimeout(() => { last = 0; track() }, 250); return }
    last = now
    h.replaceState({ dy: Math.round(-cur.getBoundingClientRect().top) }, '', url)
  }
  addEventListener('scroll', () => { tick = tick || requestAnimationFrame(track) }, { passive: true })
  for (const e of ['pagehide', 'beforeunload']) addEventListener(e, () => { last = 0; track() })

  // Restore the saved offset; a spot past the end of this page's document is
  // reached once the next page has been appended.
  const first = feed.querySelector('article[data-url]')
  let want = first && h.state && h.state.dy > 0 ? first.getBoundingClientRect().top + scrollY + h.state.dy : null
  function restore () {
    if (want == null) return
    scrollTo(0, want)
    if (Math.abs(scrollY - want) < 2) want = null
  }
  // Once the reader scrolls on their own, stop steering.
  for (const e of ['wheel', 'touchstart', 'keydown']) addEventListener(e, () => { want = null }, { passive: true, once: true })
  restore()
  watch()
})()
