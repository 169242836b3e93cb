// The Portcullis API docs page: loads the OpenAPI documents the caller's
// role reaches with the API key (and session token) pasted in, and shows
// them in Swagger UI, whose "Try it out" calls send the same credentials.
// The key stays in this page's memory: it is never stored, and it is sent
// only to this page's own origin.
(function () {
  "use strict";

  var form = document.getElementById("pc-form");
  var keyInput = document.getElementById("pc-key");
  var tokenInput = document.getElementById("pc-token");
  var select = document.getElementById("pc-service");
  var button = document.getElementById("pc-load");
  var status = document.getElementById("pc-status");
  // The API is served next to this page: /api/docs/ → /api/v2.
  var apiBase = new URL("../v2", window.location.href).href.replace(/\/$/, "");
  var creds = { key: "", token: "" };
  var ui = null;

  function setStatus(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  function headers() {
    var h = { "Accept": "application/json", "X-Platform-API-Key": creds.key };
    if (creds.token) {
      h["X-Platform-Session-Token"] = creds.token;
    }
    return h;
  }

  function sameOrigin(url) {
    try {
      return new URL(url, window.location.href).origin === window.location.origin;
    } catch (e) {
      return false;
    }
  }

  // fetchDoc reads a document, turning the error envelope into a message.
  function fetchDoc(path) {
    return fetch(apiBase + path, { headers: headers(), credentials: "omit", cache: "no-store" }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (body) {
        if (!res.ok) {
          var msg = body && body.error && body.error.message ? body.error.message : res.statusText;
          throw new Error(res.status + ": " + msg);
        }
        return body;
      });
    });
  }

  function fillServices(doc, keep) {
    while (select.options.length > 1) {
      select.remove(1);
    }
    (doc.tags || []).forEach(function (tag) {
      var opt = document.createElement("option");
      opt.value = tag.name;
      opt.textContent = tag.description && tag.description !== tag.name ? tag.name + " (" + tag.description + ")" : tag.name;
      select.appendChild(opt);
    });
    select.value = keep;
    if (select.value !== keep) {
      select.value = "";
    }
  }

  function render(spec) {
    ui = SwaggerUIBundle({
      spec: spec,
      dom_id: "#swagger-ui",
      deepLinking: false,
      presets: [SwaggerUIBundle.presets.apis],
      layout: "BaseLayout",
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      displayRequestDuration: true,
      filter: true,
      tryItOutEnabled: true,
      persistAuthorization: false,
      // No badge from the public validator: nothing leaves this origin.
      validatorUrl: null,
      requestInterceptor: function (req) {
        // Credentials go to this origin only, never to a server a
        // document names elsewhere.
        if (sameOrigin(req.url)) {
          req.headers["X-Platform-API-Key"] = creds.key;
          if (creds.token) {
            req.headers["X-Platform-Session-Token"] = creds.token;
          }
        }
        return req;
      },
      onComplete: function () {
        ui.preauthorizeApiKey("api_key", creds.key);
        if (creds.token) {
          ui.preauthorizeApiKey("session_token", creds.token);
        }
      }
    });
    window.portcullisUI = ui;
  }

  function load() {
    creds.key = keyInput.value.trim();
    creds.token = tokenInput.value.trim();
    if (!creds.key) {
      setStatus("error", "An API key is needed: every call sends it as X-Platform-API-Key.");
      return Promise.resolve();
    }
    var wanted = select.value;
    button.disabled = true;
    setStatus("loading", "Loading…");
    return fetchDoc("/api_docs").then(function (combined) {
      fillServices(combined, wanted);
      var service = select.value;
      if (!service) {
        return { spec: combined, label: "all services" };
      }
      return fetchDoc("/api_docs/" + encodeURIComponent(service)).then(function (doc) {
        return { spec: doc, label: "service '" + service + "'" };
      });
    }).then(function (got) {
      render(got.spec);
      var n = Object.keys(got.spec.paths || {}).length;
      setStatus("ready", "Showing " + got.label + ": " + n + " path" + (n === 1 ? "" : "s") +
        " your role reaches. Use \"Try it out\" on any operation; calls send your key" + (creds.token ? " and session token." : "."));
    }).catch(function (err) {
      setStatus("error", "Could not load the API documents: " + err.message);
    }).then(function () {
      button.disabled = false;
    });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    load();
  });
  select.addEventListener("change", function () {
    if (creds.key) {
      load();
    }
  });

  // #key=…&token=…&service=… fills the form and loads at once (links
  // from tools); the fragment is never sent to a server and is cleared.
  if (window.location.hash.length > 1) {
    var params = new URLSearchParams(window.location.hash.slice(1));
    if (params.get("key")) {
      keyInput.value = params.get("key");
      tokenInput.value = params.get("token") || "";
      var svc = params.get("service") || "";
      if (svc) {
        var opt = document.createElement("option");
        opt.value = svc;
        opt.textContent = svc;
        select.appendChild(opt);
        select.value = svc;
      }
      history.replaceState(null, "", window.location.pathname + window.location.search);
      load();
    }
  }
})();
