// The reliability diagram's width (anywidget, invisible). A plotly FigureWidget is drawn before it is
// in the page, at plotly's default 700 px, and (as an anywidget) never fits itself to its output area
// afterwards: on a projector (a 673 px area) that cut its last bar and the "1" tick. This companion
// sits in the figure's box, measures the box's width whenever it changes (the plot drawn, the window
// or a side panel resized) and sets it in its `width` trait; the kernel sets the figure's layout width
// to it, which plotly's widget draws. Nothing is drawn here.

import "./plot_fit.css";

/** The width (whole px) a figure in `box` should take: the box's own, 0 while it is not laid out. */
export function fitWidth(box) {
  return box ? Math.floor(box.clientWidth) : 0;
}

function render({ model, el }) {
  el.classList.add("lv-plot-fit");
  let box = null;
  let frame = 0;
  const fit = () => {
    frame = 0;
    const width = fitWidth(box);
    if (width > 0 && width !== model.get("width")) {
      model.set("width", width);
      model.save_changes();
    }
  };
  const observer = new ResizeObserver(() => {
    if (!box && el.parentElement) observer.observe((box = el.parentElement));
    if (!frame) frame = requestAnimationFrame(fit);
  });
  observer.observe(el); // (in the page, el gets a width: then its parent, the figure's box, is known)
  return () => {
    observer.disconnect();
    cancelAnimationFrame(frame);
  };
}

export default { render };
