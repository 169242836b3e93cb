<?php
// Portcullis script runner for PHP: one worker process, one script run at a
// time, JSON lines on STDIN/STDOUT (see script/external.go).
//
// Sandbox (set on the command line by Portcullis): php -n (no ini files, no
// optional extensions), open_basedir limited to the runner's directory,
// disable_functions for processes, network, files and the environment,
// disable_classes for the file and FFI classes, allow_url_fopen off, a
// memory_limit. A script sees $event and $platform ($platform['api']->get()
// and its siblings, $platform['session']); echo output goes to the log.

final class PortcullisApi
{
    private function call(string $method, $path, $payload)
    {
        if (!is_string($path)) {
            throw new TypeError('platform.api.' . strtolower($method) . ': path must be a string');
        }
        portcullis_send(['type' => 'call', 'method' => $method, 'path' => $path, 'payload' => $payload]);
        $r = portcullis_read();
        if (!empty($r['error'])) {
            throw new RuntimeException((string)$r['error']);
        }
        return ['status_code' => $r['status_code'] ?? null, 'content' => $r['content'] ?? null];
    }
    public function get($path, $payload = null) { return $this->call('GET', $path, $payload); }
    public function post($path, $payload = null) { return $this->call('POST', $path, $payload); }
    public function put($path, $payload = null) { return $this->call('PUT', $path, $payload); }
    public function patch($path, $payload = null) { return $this->call('PATCH', $path, $payload); }
    public function delete($path, $payload = null) { return $this->call('DELETE', $path, $payload); }
}

/** throw new ScriptAbort(403, "message") ends the request with that status. */
class ScriptAbort extends Exception
{
    public function __construct(int $status_code, string $message = '')
    {
        parent::__construct($message, $status_code);
    }
}

function portcullis_send(array $m): void
{
    $s = json_encode($m, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PARTIAL_OUTPUT_ON_ERROR);
    if ($s === false) {
        $s = json_encode(['type' => 'done', 'failure' => 'the script left a value that is not JSON: ' . json_last_error_msg()]);
    }
    $s .= "\n";
    for ($off = 0, $n = strlen($s); $off < $n;) {
        $w = fwrite(STDOUT, substr($s, $off));
        if ($w === false || $w === 0) {
            exit(1);
        }
        $off += $w;
    }
    fflush(STDOUT);
}

function portcullis_read(): array
{
    $line = fgets(STDIN);
    if ($line === false) {
        exit(0);
    }
    $m = json_decode($line, true, 512, JSON_BIGINT_AS_STRING);
    if (!is_array($m)) {
        exit(2);
    }
    return $m;
}

function portcullis_compile(string $src): Closure
{
    // The wrapper keeps the script's line numbers: it opens on line 1.
    return eval('return function (array &$event, array $platform) {' . $src . "\n};");
}

function portcullis_syntax(Throwable $e): string
{
    return 'syntax error on line ' . $e->getLine() . ': ' . $e->getMessage();
}

function portcullis_failure(Throwable $e): array
{
    $code = $e->getCode();
    if (is_int($code) && $code >= 400 && $code <= 599) {
        return ['type' => 'done', 'abort' => ['status_code' => $code, 'message' => $e->getMessage()]];
    }
    $line = '';
    if (str_contains($e->getFile(), "eval()'d code")) {
        $line = ' (line ' . $e->getLine() . ')';
    }
    return ['type' => 'done', 'failure' => get_class($e) . ': ' . $e->getMessage() . $line];
}

set_error_handler(function (int $no, string $str, string $file, int $line) {
    if (!(error_reporting() & $no)) {
        return false;
    }
    if ($no === E_DEPRECATED || $no === E_USER_DEPRECATED || $no === E_NOTICE || $no === E_USER_NOTICE) {
        return true;
    }
    throw new ErrorException($str, 0, $no, $file, $line);
});

$portcullis_api = new PortcullisApi();
$portcullis_compiled = [];
portcullis_send(['type' => 'ready']);
for (;;) {
    $msg = portcullis_read();
    if (($msg['type'] ?? '') === 'check') {
        try {
            portcullis_compile((string)($msg['source'] ?? ''));
            portcullis_send(['type' => 'done']);
        } catch (ParseError $e) {
            portcullis_send(['type' => 'done', 'failure' => portcullis_syntax($e)]);
        }
        continue;
    }
    $key = (string)($msg['key'] ?? '');
    if (!isset($portcullis_compiled[$key])) {
        try {
            $fn = portcullis_compile((string)($msg['source'] ?? ''));
        } catch (ParseError $e) {
            portcullis_send(['type' => 'done', 'failure' => portcullis_syntax($e)]);
            continue;
        }
        if (count($portcullis_compiled) > 500) {
            $portcullis_compiled = [];
        }
        $portcullis_compiled[$key] = $fn;
    }
    $event = is_array($msg['event'] ?? null) ? $msg['event'] : [];
    $platform = ['api' => $portcullis_api, 'session' => is_array($msg['session'] ?? null) ? $msg['session'] : []];
    ob_start();
    try {
        $result = $portcullis_compiled[$key]($event, $platform);
        $out = ['type' => 'done', 'event' => (object)$event];
        if ($result !== null) {
            $out['result'] = $result;
        }
    } catch (Throwable $e) {
        $out = portcullis_failure($e);
    }
    $printed = ob_get_clean();
    if ($printed !== false && $printed !== '') {
        fwrite(STDERR, $printed . "\n");
    }
    portcullis_send($out);
}
